// The reaper nudge's 404 is a no-op on an older svc server only (the spec's "404 ... treated as a
// no-op on older servers"): a --server that is not an svc server at all (a wrong path, another
// service) answers 404 too, and the doctor must not report that as a harmless OK (exit 0).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { runDoctor } from './run-doctor.ts';

let app: TestApp;
let older: HttpTarget;
let other: HttpTarget;

beforeAll(async () => {
  app = await startTestApp();
  // An svc server from before the nudge: its health answers, the sweep route is unknown (404).
  older = await startHttpTarget((_req, res, recorded) => {
    const known = recorded.path === '/api/health';
    res.writeHead(known ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(known ? { status: 'ok' } : { detail: `route not found: ${recorded.method} ${recorded.path}` }));
  });
  // Another service: 404 for every path it does not have, an HTML page for the rest.
  other = await startHttpTarget((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not Found</body></html>');
  });
}, 60_000);
afterAll(async () => Promise.all([app?.close(), older?.close(), other?.close()]));

describe('svc doctor repair on a 404', () => {
  it('an older svc server (its /api/health answers): no_op, severity ok, exit 0', async () => {
    const run = await runDoctor(['repair', '--server', older.url, '--json']);
    expect(run.json()).toMatchObject({ action: 'repair_trigger_reaper', severity: 'ok', data: { result: 'no_op' } });
    expect(run.code).toBe(0);
  });

  it('a wrong path on a real svc server: could not run (bad_answer), exit 3, not a no-op', async () => {
    const run = await runDoctor(['repair', '--server', `${app.url}/typo`, '--json']);
    expect(run.json()).toMatchObject({ action: 'repair_trigger_reaper', severity: 'error', data: { failure: 'bad_answer' } });
    expect(run.json().data.summary).toMatch(/not an svc server|svc server/);
    expect(run.code).toBe(3);
  });

  it('a service that is not an svc server: could not run, exit 3', async () => {
    const run = await runDoctor(['repair', '--server', other.url, '--json']);
    expect(run.json()).toMatchObject({ severity: 'error', data: { failure: 'bad_answer' } });
    expect(run.code).toBe(3);
  });
});
