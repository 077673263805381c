// `svc inspect ID` refused by the server says why, as the other client commands do: the request
// and the server's detail (a wrong SVC_API_TOKEN is "unknown or revoked"), never a bare
// "the server refused (401)" that leaves a person guessing between a token, a role and a typo.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { runSvc } from '../../helpers/process.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
});
afterAll(async () => t?.close());

describe('svc inspect against SVC_AUTH=token', () => {
  it('a wrong token is refused with the request and the detail (exit 1, as its usage says)', async () => {
    const r = await runSvc(['inspect', '1'], { SVC_SERVER_URL: t.url, SVC_API_TOKEN: 'svc_not-a-token' });
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('svc inspect: GET /api/executions/1/inspect: HTTP 401 the API token is unknown or revoked\n');
    expect(r.code).toBe(1);
  });

  it('no token at all is refused saying so', async () => {
    const r = await runSvc(['inspect', '1'], { SVC_SERVER_URL: t.url });
    expect(r.stderr).toMatch(/^svc inspect: GET \/api\/executions\/1\/inspect: HTTP 401 \S.*\n$/);
    expect(r.code).toBe(1);
  });
});
