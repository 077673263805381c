// The GUI's live inspection stream (GET /api/executions/{id}/inspect as a WebSocket) through the
// gateway in front of a real server (SVC_AUTH=gateway) and worker: the handshake passes the same
// checks as any request (a caller with a role; a session only from an allowed origin) and is
// relayed to the server as that caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { GATEWAY_CLIENT_ID, GATEWAY_CLIENT_SECRET, startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// Its one step runs long enough for the stream to be read while the execution runs.
const SLOW = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: slow, path: gw/ws-slow }\nworkflow:\n  - step: start\n    tool: { name: wait, kind: shell, command: "sleep 3" }\n';

let idp: TestProvider;
let stack: TestStack;
let gw: TestGateway;
let token: string;
let executionId: number;

beforeAll(async () => {
  stack = await startTestStack({ workers: 1, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  // A provider, so the gateway keeps sessions (in the server's database); the test makes one directly.
  idp = await startTestProvider(['http://127.0.0.1:1']);
  gw = await startTestGateway({
    SVC_SERVER_URL: stack.url,
    SVC_DATABASE_URL: stack.databaseUrl,
    SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET,
    SVC_OIDC_ISSUER: idp.issuer,
    SVC_OIDC_CLIENT_ID: GATEWAY_CLIENT_ID,
    SVC_OIDC_CLIENT_SECRET: GATEWAY_CLIENT_SECRET,
  });
  token = await createApiToken(stack.deps.db, 'gw-ws', 'operator');
  expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: SLOW }, bearer(token))).status).toBe(201);
  executionId = (await http(gw.url, 'POST', '/api/run/playbook', { path: 'gw/ws-slow' }, bearer(token))).body.execution_id;
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await stack?.close();
  await idp?.close();
});

const inspectUrl = () => `${gw.url.replace(/^http/, 'ws')}/api/executions/${executionId}/inspect`;

/** Opens the stream with these headers: its first message, or the HTTP status that refused the handshake. */
function firstMessage(headers: Record<string, string>): Promise<{ status: number } | { message: { type?: string } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(inspectUrl(), { headers });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    ws.once('message', (data) => {
      resolve({ message: JSON.parse(String(data)) });
      ws.close();
    });
    ws.once('error', reject);
  });
}

describe('gateway: WebSocket inspection stream', () => {
  it('relays the stream to a caller with the server\'s API token', async () => {
    expect(await firstMessage(bearer(token))).toEqual({ message: expect.objectContaining({ type: '@xstate.actor' }) });
  });

  it('refuses a handshake with no credential (401) and one with a forged identity header alone', async () => {
    expect(await firstMessage({})).toEqual({ status: 401 });
    expect(await firstMessage({ 'x-svc-identity': 'forged.value' })).toEqual({ status: 401 });
  });

  it('relays it to a session (the GUI) from the gateway\'s own origin, and refuses the session from another origin (403)', async () => {
    const sid = await gw.sessions!.create({ sub: 'ada', name: 'Ada', email: null, role: 'viewer', paths: null, idToken: undefined });
    const cookie = `svc_session=${sid}`;
    expect(await firstMessage({ cookie, origin: new URL(gw.url).origin })).toEqual({ message: expect.objectContaining({ type: '@xstate.actor' }) });
    expect(await firstMessage({ cookie, origin: 'https://evil.example' })).toEqual({ status: 403 });
    expect(await firstMessage({ cookie })).toEqual({ status: 403 });
  });

  it('still answers a plain GET of the same path with the events so far', async () => {
    const r = await http(gw.url, 'GET', `/api/executions/${executionId}/inspect`, undefined, bearer(token));
    expect(r.status).toBe(200);
    expect(r.body.events[0]).toMatchObject({ type: '@xstate.actor' });
  });
});
