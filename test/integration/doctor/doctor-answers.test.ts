// The doctor against real HTTP servers on port 0 that answer as a server might: the reaper
// nudge's 200, 409 and 404 (an older server), refusals, bad answers, health with a database or
// bus down, and no server at all. Each answer maps to one exit code and outcome.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { runDoctor, serveDoctor, type ServedDoctor } from './run-doctor.ts';

const SWEEP = '/api/admin/command_reaper/sweep';

// What the fake server answers, per path; set by each test.
let answers: Record<string, { status: number; body: unknown }> = {};
let target: HttpTarget;
let closedPort: number;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/html' : 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
}

beforeAll(async () => {
  target = await startHttpTarget((_req, res, recorded) => {
    const answer = answers[recorded.path];
    send(res, answer?.status ?? 404, answer?.body ?? { message: `Route ${recorded.method}:${recorded.path} not found`, error: 'Not Found', statusCode: 404 });
  });
  closedPort = await freePort(); // nothing listens there
});
afterAll(async () => target?.close());

describe('svc doctor repair (the reaper nudge)', () => {
  it('200: reports what the sweep scanned and republished, exit 0', async () => {
    answers = { [SWEEP]: { status: 200, body: { status: 'ok', scanned: 7, republished: 3 } } };
    const before = target.requests.length;
    const run = await runDoctor(['repair', '--server', target.url, '--json']);
    expect(run.code).toBe(0);
    const o = run.json();
    expect(o).toMatchObject({ action: 'repair_trigger_reaper', severity: 'ok', data: { result: 'swept', scanned: 7, republished: 3 } });
    expect(Date.parse(o.generated_at)).not.toBeNaN();
    // One POST to the nudge, with a JSON object body.
    const sent = target.requests.slice(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${SWEEP}`]);
    expect(JSON.parse(sent[0].body)).toEqual({});

    // Its output read by a program (not a terminal): the outcome object itself, as the spec has it.
    const piped = await runDoctor(['repair', '--server', target.url]);
    expect(piped.code).toBe(0);
    expect(piped.json()).toMatchObject({ action: 'repair_trigger_reaper', severity: 'ok', data: { result: 'swept' } });
    expect(typeof piped.json().generated_at).toBe('string');
    expect((await runDoctor(['repair', '--server', target.url, '--json', '--text'])).code).toBe(3);
    const text = await runDoctor(['repair', '--server', target.url, '--text']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('svc doctor repair: OK');
    expect(text.stdout).toContain('republished 3 of the 7 commands');
    expect(text.stdout).toContain('svc doctor detect');
  });

  it('409: a sweep is already running, which does the work asked for: exit 0, sweep_in_progress', async () => {
    answers = { [SWEEP]: { status: 409, body: { detail: { code: 'sweep_in_progress', message: 'another server holds the reaper lease' } } } };
    const run = await runDoctor(['repair', '--server', target.url, '--json']);
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ severity: 'ok', data: { result: 'sweep_in_progress' } });
    expect(run.json().data.summary).toContain('another server holds the reaper lease');
  });

  it('404: a server without the endpoint is a no-op, exit 0', async () => {
    // An older svc server: its health answers (only an svc server's 404 is a no-op).
    answers = { '/api/health': { status: 200, body: { status: 'ok' } } };
    const run = await runDoctor(['repair', '--server', target.url, '--json']);
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ action: 'repair_trigger_reaper', severity: 'ok', data: { result: 'no_op' } });
    expect(run.json().data.summary).toMatch(/no reaper endpoint/);
  });

  it('a refusal (401/403), a malformed answer or a server error: could not run, exit 3', async () => {
    for (const [status, body, failure] of [
      [401, { detail: 'missing or invalid API token' }, 'refused'],
      [403, { detail: 'needs the admin role' }, 'refused'],
      [200, { status: 'ok', scanned: 'many' }, 'bad_answer'],
      [200, '<html>a proxy page</html>', 'bad_answer'],
      [500, { detail: 'boom' }, 'server_error'],
    ] as const) {
      answers = { [SWEEP]: { status, body } };
      const run = await runDoctor(['repair', '--server', target.url, '--json']);
      expect(run.code, `${status} ${JSON.stringify(body)}`).toBe(3);
      expect(run.json()).toMatchObject({ severity: 'error', data: { failure } });
    }
    answers = { [SWEEP]: { status: 401, body: { detail: 'missing or invalid API token' } } };
    const text = await runDoctor(['repair', '--server', target.url, '--text']);
    expect(text.stdout).toContain('svc doctor repair: ERROR');
    expect(text.stdout).toContain('SVC_API_TOKEN');
  });
});

describe('svc doctor reachability', () => {
  it('a server that cannot reach its database (503): critical, exit 2', async () => {
    answers = { '/api/health': { status: 503, body: { status: 'degraded', database: 'unreachable', bus: 'ok' } } };
    const run = await runDoctor(['reachability', '--server', target.url, '--json']);
    expect(run.code).toBe(2);
    expect(run.json()).toMatchObject({ action: 'reachability', severity: 'critical', data: { api: { status: 'ok', http_status: 503 }, database: { status: 'unreachable' }, bus: { status: 'ok' } } });
    const text = await runDoctor(['reachability', '--server', target.url, '--text']);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain('cannot reach its database');
    expect(text.stdout).toMatch(/next:\n {2}check PostgreSQL/);
  });

  it('a database that takes no writes (503 read_only): critical, said as such, exit 2', async () => {
    answers = { '/api/health': { status: 503, body: { status: 'degraded', database: 'read_only', bus: 'ok' } } };
    const text = await runDoctor(['reachability', '--server', target.url, '--text']);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain('it takes no writes');
    expect(text.stdout).not.toContain('cannot reach its database');
    expect(text.stdout).toMatch(/next:\n {2}point SVC_DATABASE_URL at the primary/);
  });

  it('a bus that does not listen: warning, exit 2', async () => {
    answers = { '/api/health': { status: 200, body: { status: 'degraded', database: 'ok', bus: 'disconnected' } } };
    const run = await runDoctor(['reachability', '--server', target.url, '--json']);
    expect(run.code).toBe(2);
    expect(run.json()).toMatchObject({ severity: 'warning', data: { database: { status: 'ok' }, bus: { status: 'disconnected' } } });
  });

  it('an older server without database or bus fields: ok with those unknown, exit 0', async () => {
    answers = { '/api/health': { status: 200, body: { status: 'ok' } } };
    const run = await runDoctor(['reachability', '--server', target.url, '--json']);
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ severity: 'ok', data: { database: { status: 'unknown' }, bus: { status: 'unknown' } } });
  });

  it('something that is not an svc server: could not run, exit 3', async () => {
    answers = { '/api/health': { status: 200, body: '<html>hello</html>' } };
    const run = await runDoctor(['reachability', '--server', target.url, '--json']);
    expect(run.code).toBe(3);
    expect(run.json()).toMatchObject({ severity: 'error', data: { failure: 'bad_answer' } });
  });
});

describe('no server at the address', () => {
  it('every tool could not run: exit 3, with what to try', async () => {
    const server = `http://127.0.0.1:${closedPort}`;
    for (const tool of ['detect', 'reachability', 'repair']) {
      const run = await runDoctor([tool, '--server', server, '--json']);
      expect(run.code, tool).toBe(3);
      expect(run.json()).toMatchObject({ severity: 'error', data: { failure: 'unreachable', server } });
    }
    const text = await runDoctor(['reachability', '--server', server, '--text']);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain(`cannot reach the server at ${server}`);
    expect(text.stdout).toContain('svc start');
  });

  it('a bad option is "could not run" too (exit 3; 2 always means an anomaly), naming the option', async () => {
    for (const args of [['detect', '--stuck-minutes', '0'], ['detect', '--limit', 'many'], ['detect', '--bogus'], ['cure'], [], ['reachability', '--server', 'ftp://x']]) {
      const run = await runDoctor(args);
      expect(run.code, args.join(' ')).toBe(3);
      expect(run.stdout).toBe('');
    }
    expect((await runDoctor(['detect', '--stuck-minutes', '0'])).stderr).toContain('--stuck-minutes: must be > 0');
    expect((await runDoctor(['detect', '--limit', 'many'])).stderr).toContain('--limit: expects a number');
    const help = await runDoctor(['--help']);
    expect(help.code).toBe(0);
  });
});

describe('svc doctor serve against these servers', () => {
  let served: ServedDoctor;
  beforeAll(async () => {
    served = await serveDoctor(target.url);
  });
  afterAll(async () => served?.stop());

  it('answers each outcome with 200, and 502 when the tool could not run (never 500)', async () => {
    answers = { [SWEEP]: { status: 200, body: { status: 'ok', scanned: 2, republished: 1 } } };
    const ok = await served.call('POST', '/tools/repair_trigger_reaper/invoke');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ action: 'repair_trigger_reaper', severity: 'ok', data: { result: 'swept', republished: 1 } });

    answers = { '/api/health': { status: 503, body: { status: 'degraded', database: 'unreachable', bus: 'ok' } } };
    const anomaly = await served.call('POST', '/tools/reachability/invoke', {});
    expect(anomaly.status).toBe(200);
    expect(anomaly.body).toMatchObject({ severity: 'critical' });

    answers = { [SWEEP]: { status: 403, body: { detail: 'needs the admin role' } } };
    const refused = await served.call('POST', '/tools/repair_trigger_reaper/invoke', {});
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ action: 'repair_trigger_reaper', severity: 'error', data: { failure: 'refused' } });
  });

  it('refuses to listen beyond loopback: it checks no caller', async () => {
    const run = await runDoctor(['serve', '--host', '0.0.0.0', '--port', '0', '--server', target.url]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/not a loopback address/);
  });
});
