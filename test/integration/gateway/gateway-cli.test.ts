// `svc gateway` as a process: it starts in front of a server, says when no OpenID provider is
// set, answers /health, stops on SIGTERM with exit 0; bad settings stop it at start with 78.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc, spawnSvc, waitForOutput, withTimeout } from '../../helpers/process.ts';
import { TEST_GATEWAY_SECRET } from '../../helpers/gateway.ts';

let upstream: Server;
let upstreamUrl: string;

beforeAll(async () => {
  upstream = createServer((_req, res) => res.end('{"status":"ok"}'));
  await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', ok));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((ok) => upstream.close(() => ok()));
});

describe('svc gateway', () => {
  it('starts, says it has no provider, answers /health, and stops on SIGTERM', async () => {
    const gw = spawnSvc(['gateway', '--port', '0'], { SVC_SERVER_URL: upstreamUrl, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
    await waitForOutput(gw, 'svc gateway listening on', 20_000);
    const url = /listening on (http:\/\/\S+),/.exec(gw.output())![1];
    expect(gw.output()).toContain('no SVC_OIDC_ISSUER');
    const res = await fetch(`${url}/health`);
    expect(await res.text()).toBe('ok');
    expect((await fetch(`${url}/ready`)).status).toBe(200);
    // Its log is at warn (spawnSvc), and the audit line of a state-changing request is written all the same.
    const token = `svc_${'t'.repeat(43)}`;
    expect((await fetch(`${url}/api/run/playbook`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"path":"a"}' })).status).toBe(200);
    await waitForOutput(gw, '"gateway audit"', 5_000);
    expect(gw.output()).toContain('"path":"/api/run/playbook"');
    expect(gw.output()).not.toContain(token);
    gw.kill('SIGTERM');
    expect(await withTimeout(gw.exited, 10_000, 'gateway exit')).toBe(0);
  });

  it('refuses to start without the assertion key, or with a plain-http provider elsewhere (exit 78)', async () => {
    const noKey = await runSvc(['gateway', '--port', '0'], { SVC_SERVER_URL: upstreamUrl });
    expect(noKey.code).toBe(78);
    expect(noKey.stderr).toContain('SVC_GATEWAY_SECRET is required');
    const http = await runSvc(['gateway', '--port', '0'], { SVC_SERVER_URL: upstreamUrl, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET, SVC_OIDC_ISSUER: 'http://id.example.test', SVC_OIDC_CLIENT_ID: 'c' });
    expect(http.code).toBe(78);
    expect(http.stderr).toContain('https');
  });
});
