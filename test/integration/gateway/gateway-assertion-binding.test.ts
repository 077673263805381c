// The identity the gateway asserts upstream is bound to the one request it was signed for: an
// assertion read off the gateway-to-server hop (a real gateway, a real server in SVC_AUTH=gateway,
// a real OpenID provider, a recording relay between them) opens no other route, method or query
// for its 60 s, nor another body on its route; a changed binding breaks the signature; one bound
// to no request opens nothing.
import { createHmac } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDENTITY_HEADER } from '../../../src/auth/identity-assertion.ts';
import { bearer } from '../../helpers/auth.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;
let relay: Server;
/** The identity header of each request the gateway sent upstream, by `<METHOD> <target>`. */
const seen = new Map<string, string>();

/** A pass-through to the server that notes the assertion each request carried. */
async function startRelay(upstream: URL): Promise<Server> {
  const server = createServer((req, res) => {
    const asserted = req.headers[IDENTITY_HEADER];
    if (typeof asserted === 'string') seen.set(`${req.method} ${req.url}`, asserted);
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers as IncomingHttpHeaders }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return server;
}

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  stack = await startTestStack({ workers: 0, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  relay = await startRelay(new URL(stack.url));
  const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  gw = await startTestGateway({ ...gatewayEnv(stack, idp, TEST_GATEWAY_SECRET), SVC_SERVER_URL: relayUrl, SVC_OIDC_PATHS_CLAIM: 'svc_paths' });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await new Promise((ok) => relay?.close(ok));
  await stack?.close();
  await idp?.close();
});

describe('gateway: the identity assertion is bound to its request', () => {
  it('a captured assertion works for the request it was made for and is refused on any other', async () => {
    const admin = bearer(await idp.programToken('program-admin'));
    expect((await http(gw.url, 'GET', '/api/executions?limit=1', undefined, admin)).status).toBe(200);
    const captured = seen.get('GET /api/executions?limit=1');
    expect(captured).toBeDefined();
    const replay = { [IDENTITY_HEADER]: captured! };

    // The same request again, straight to the server (within the assertion's 60 s): as the gateway sent it.
    expect((await http(stack.url, 'GET', '/api/executions?limit=1', undefined, replay)).status).toBe(200);
    // Anything else: another query, another route, another method (an admin's write).
    for (const [method, path, body] of [
      ['GET', '/api/executions?limit=2', undefined],
      ['GET', '/api/executions', undefined],
      ['GET', '/api/credentials', undefined],
      ['POST', '/api/credentials', { name: 'stolen_auth', type: 'bearer', data: { token: 'x' } }],
    ] as const) {
      const res = await http(stack.url, method, path, body, replay);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.detail).toBe('identity assertion was made for another request');
    }
    expect((await http(stack.url, 'GET', '/api/credentials', undefined, admin)).status).toBe(401);
  });

  it('an assertion bound to no request is refused, however well signed: it would open every route', async () => {
    // What the gateway made before f4cd4751, or anything else holding the secret: {sub, role, exp}.
    const body = Buffer.from(JSON.stringify({ sub: 'ada', role: 'admin', exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url');
    const unbound = { [IDENTITY_HEADER]: `${body}.${createHmac('sha256', TEST_GATEWAY_SECRET).update(body).digest('base64url')}` };
    for (const [method, path, payload] of [
      ['GET', '/api/credentials', undefined],
      ['POST', '/api/credentials', { name: 'unbound_auth', type: 'bearer', data: { token: 'x' } }],
    ] as const) {
      const res = await http(stack.url, method, path, payload, unbound);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body).toEqual({ detail: 'identity assertion is bound to no request (its req claim is missing)' });
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    }
  });

  it('a captured assertion starts no other playbook on its route: the body is bound too', async () => {
    const admin = bearer(await idp.programToken('program-admin'));
    const reports = bearer(await idp.programToken('program-reports'));
    for (const path of ['reports/daily', 'payroll/pay']) {
      const content = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${path.split('/')[1]}, path: ${path} }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n`;
      expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content }, admin)).status).toBe(201);
    }
    // Held to reports/* by its path patterns, the caller cannot start payroll/pay through the gateway.
    expect((await http(gw.url, 'POST', '/api/run/playbook', { path: 'payroll/pay' }, reports)).status).toBe(403);
    seen.clear();
    expect((await http(gw.url, 'POST', '/api/run/playbook', { path: 'reports/daily' }, reports)).status).toBe(200);
    const replay = { [IDENTITY_HEADER]: seen.get('POST /api/run/playbook')! };
    expect(replay[IDENTITY_HEADER]).toBeDefined();
    const started = async () => (await stack.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = 'payroll/pay'`)).rows[0].n;

    // Straight to the server, within its 60 s, with another body: refused, nothing started.
    for (const body of [{ path: 'payroll/pay' }, { path: 'reports/daily', workload: { extra: 1 } }, '']) {
      const res = await http(stack.url, 'POST', '/api/run/playbook', body === '' ? undefined : body, replay);
      expect(res.status, JSON.stringify(body)).toBe(401);
      expect(res.body).toEqual({ detail: 'identity assertion was made for another request body' });
    }
    expect(await started()).toBe(0);
    // The identical request is what the TTL bounds (no once-only record shared by every server):
    // it repeats what the caller did, no more.
    expect((await http(stack.url, 'POST', '/api/run/playbook', { path: 'reports/daily' }, replay)).status).toBe(200);
  });

  it('every route the gateway forwards still passes: reads, writes and the gateway\'s own read as the caller', async () => {
    const reports = bearer(await idp.programToken('program-reports'));
    const admin = bearer(await idp.programToken('program-admin'));
    const playbook = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: bound, path: reports/bound }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n';
    expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: playbook }, admin)).status).toBe(201);
    const run = await http(gw.url, 'POST', '/api/run/playbook', { path: 'reports/bound' }, reports);
    expect(run.status).toBe(200);
    const id = Number(run.body.execution_id);
    expect((await http(gw.url, 'GET', `/api/executions/${id}`, undefined, reports)).status).toBe(200);
    seen.clear();
    // A caller held to path patterns: the gateway reads the execution as the caller (its own
    // request, its own assertion), then forwards the retry (another assertion).
    const retry = await http(gw.url, 'POST', `/api/executions/${id}/retry`, {}, reports);
    expect(retry.status, JSON.stringify(retry.body)).toBeLessThan(500);
    expect(retry.status).not.toBe(401);
    expect([...seen.keys()]).toEqual([`GET /api/executions/${id}`, `POST /api/executions/${id}/retry`]);
    expect(seen.get(`GET /api/executions/${id}`)).not.toBe(seen.get(`POST /api/executions/${id}/retry`));
  });
});
