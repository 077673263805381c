// A sender that trickles a webhook body (a slow-loris: the headers, then a byte now and then, or
// nothing) holds its connection no longer than SVC_REQUEST_TIMEOUT_SECONDS: it is answered 408
// request_timeout, the connection closed, and nothing starts. fastify's requestTimeout defaults to
// 0 (no limit) and overrides node's 300 s, so the body of a delivery to the one route anyone may
// call without a token could take for ever, each such connection held open by the server, and
// docs/operations.md's 408 ("headers or body did not arrive within the HTTP server's timeouts")
// was only ever given for headers. The gateway, which reads the body before passing it on, is
// bounded the same way.
import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';

const SECRET = 'slow-hook-secret-5d1e7a0b3c';
const PATH = 'hooks/slow_body';
const TIMEOUT_SECONDS = '2';
let t: TestApp;
let gw: TestGateway;

beforeAll(async () => {
  t = await startTestApp({ SVC_REQUEST_TIMEOUT_SECONDS: TIMEOUT_SECONDS });
  gw = await startTestGateway({ SVC_SERVER_URL: t.url, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET, SVC_REQUEST_TIMEOUT_SECONDS: TIMEOUT_SECONDS });
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'slow_hook', type: 'custom', data: { secret: SECRET } })).status).toBe(201);
  await executionApi(t.url).register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: slow_body, path: ${PATH} }
workload: { body: null }
triggers:
  - { name: hook, kind: webhook, auth: slow_hook, signature: github, payload: { body: "{{ request.body }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
}, 60_000);
afterAll(async () => {
  await gw?.app.close();
  await t?.close();
});

const executions = async () => (await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = $1`, [PATH])).rows[0].n;

/**
 * Sends a delivery's headers announcing `length` bytes, then one byte every `everyMs` (never, when
 * 0); resolves with what the server wrote back and how long the connection lived, or `open` when
 * it was still open after `giveUpMs`.
 */
function trickle(base: string, length: number, everyMs: number, giveUpMs: number): Promise<{ answer: string; ms: number; open: boolean }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    const end = (open: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ answer, ms: Date.now() - started, open });
    };
    const giveUp = setTimeout(() => end(true), giveUpMs);
    socket.on('data', (c) => (answer += String(c)));
    socket.on('close', () => end(false));
    socket.on('error', () => {});
    socket.on('connect', () => {
      socket.write(`POST /api/hooks/${PATH}/hook HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nX-Hub-Signature-256: sha256=${'0'.repeat(64)}\r\nContent-Length: ${length}\r\n\r\n`);
      if (everyMs > 0) timer = setInterval(() => socket.writable && socket.write(' '), everyMs);
    });
  });
}

describe('a webhook body that trickles in', () => {
  it('a byte every 300 ms, or none at all, is cut at the request timeout with 408 request_timeout; nothing starts', async () => {
    const before = await executions();
    const [dribbled, stalled] = await Promise.all([trickle(t.url, 1000, 300, 20_000), trickle(t.url, 1000, 0, 20_000)]);
    for (const r of [dribbled, stalled]) {
      expect(r.open, 'the connection was still open after 20 s').toBe(false);
      expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(r.answer).toContain('"code":"request_timeout"');
      // 2 s, checked every half second or so; far from node's 300 s (or fastify's never).
      expect(r.ms).toBeLessThan(8_000);
    }
    expect(await executions()).toBe(before);
  }, 30_000);

  it('through the gateway too', async () => {
    const r = await trickle(gw.url, 1000, 300, 20_000);
    expect(r.open, 'the connection was still open after 20 s').toBe(false);
    expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.ms).toBeLessThan(8_000);
  }, 30_000);

  it('a delivery that arrives in time is taken as before', async () => {
    const body = Buffer.from('{"ok": true}');
    const res = await fetch(`${t.url}/api/hooks/${PATH}/hook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` },
      body,
    });
    expect(res.status).toBe(202);
  });
});
