// `svc inspect ID` refused by the server says why, as the other client commands do: the request
// and the server's detail (a wrong SVC_API_TOKEN is "unknown or revoked"), never a bare
// "the server refused (401)" that leaves a person guessing between a token, a role and a typo.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { revokeApiToken } from '../../../src/db/api-token.repo.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { runSvc, spawnSvc, waitForOutput } from '../../helpers/process.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
});
afterAll(async () => t?.close());

describe('svc inspect against SVC_AUTH=token', () => {
  it('a wrong token is refused with the request and the detail (exit 6, not allowed, as svc status)', async () => {
    const r = await runSvc(['inspect', '1'], { SVC_SERVER_URL: t.url, SVC_API_TOKEN: 'svc_not-a-token' });
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('svc inspect: GET /api/executions/1/inspect: HTTP 401 the API token is unknown or revoked\n');
    expect(r.code).toBe(6);
  });

  it('no token at all is refused saying so', async () => {
    const r = await runSvc(['inspect', '1'], { SVC_SERVER_URL: t.url });
    expect(r.stderr).toMatch(/^svc inspect: GET \/api\/executions\/1\/inspect: HTTP 401 \S.*\n$/);
    expect(r.code).toBe(6);
  });
});

describe('svc inspect whose token is revoked while it follows (the stream closed 1008)', () => {
  it('exits 6, not allowed, as a token refused at the start; with --json the reason on stdout, status 401', async () => {
    const admin = await createApiToken(t.deps.db, 'inspect-admin', 'admin');
    const gate = 'apiVersion: svc/v1\nmetadata: { name: gate, path: cli/inspect-refused/gate }\nworkflow:\n  - step: hold\n    wait: { signal: go, timeout: 1h }\n';
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: gate }, bearer(admin))).status).toBe(201);
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'cli/inspect-refused/gate' }, bearer(admin));
    expect(run.status).toBe(200);
    const viewer = await createApiToken(t.deps.db, 'inspect-viewer', 'viewer');
    const inspect = spawnSvc(['inspect', String(run.body.execution_id), '--json'], { SVC_SERVER_URL: t.url, SVC_API_TOKEN: viewer });
    await waitForOutput(inspect, '@xstate.actor', 15_000);
    await revokeApiToken(t.deps.db, 'inspect-viewer');
    expect(await inspect.exited).toBe(6);
    // stdout and stderr together: the last JSON object (a line per event before it), then the line on stderr.
    const text = inspect.output();
    const start = text.lastIndexOf('\n{\n') + 1;
    expect(text).toContain('svc inspect: the API token is unknown or revoked\n');
    expect(JSON.parse(text.slice(start, text.indexOf('\n}\n', start) + 2))).toEqual({ error: 'the API token is unknown or revoked', status: 401, detail: 'the API token is unknown or revoked' });
  });
});
