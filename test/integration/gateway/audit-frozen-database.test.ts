// A database that hangs (or a network that drops its packets) keeps the connections a `svc
// gateway` process already holds: a statement sent on one is never answered. A request with a
// session cookie then waited for ever (the browser's spinner, no answer at all), while /ready
// said the sessions were unreachable within 2 s. It is now a 503 with Retry-After within a
// connection's timeout, as for a database that refuses connections, and the gateway serves the
// session again once the database answers.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DB_CONNECT_TIMEOUT_MS } from '../../../src/db/db.ts';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { DatabasePath } from '../../helpers/database-path.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { spawnSvc, waitForOutput, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let idp: TestProvider;
let stack: TestStack;
let path: DatabasePath;
let a: TestGateway; // on the database directly
let b: { proc: SvcProcess; url: string }; // `svc gateway`, its database reached through `path`

beforeAll(async () => {
  idp = await startTestProvider(['http://127.0.0.1:1']);
  stack = await startTestStack({ workers: 0, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  path = DatabasePath.to(stack.databaseUrl);
  await path.open();
  const env = gatewayEnv(stack, idp, TEST_GATEWAY_SECRET);
  a = await startTestGateway(env);
  const proc = spawnSvc(['gateway', '--port', '0'], { ...env, SVC_DATABASE_URL: path.urlThrough(stack.databaseUrl) });
  await waitForOutput(proc, 'svc gateway listening on', 20_000);
  b = { proc, url: /listening on (http:\/\/\S+),/.exec(proc.output())![1] };
}, 120_000);
afterAll(async () => {
  if (b) {
    b.proc.kill('SIGTERM');
    await withTimeout(b.proc.exited, 15_000, 'gateway exit').catch(() => {});
  }
  await a?.close();
  await path?.cut();
  await stack?.close();
  await idp?.close();
});

/** `method path` at `base` with `headers`: its status, Retry-After, body and how long it took; `hung` when no answer came in `limitMs`. */
async function timed(base: string, method: string, target: string, headers: Record<string, string>, limitMs: number) {
  const t0 = Date.now();
  try {
    const res = await fetch(base + target, { method, headers, signal: AbortSignal.timeout(limitMs) });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text(), ms: Date.now() - t0 };
  } catch {
    return { status: 'hung', retryAfter: null, body: '', ms: Date.now() - t0 };
  }
}

it('answers a session made at another gateway 503 with Retry-After, not never, while the database hangs', async () => {
  const sid = await a.sessions!.create({ sub: 'frida', name: null, email: null, role: 'viewer', paths: null, idToken: undefined });
  const cookie = { cookie: `svc_session=${sid}`, origin: b.url };
  // Served at b, whose pool now holds a connection to the database.
  expect((await http(b.url, 'GET', '/auth/me', undefined, cookie)).status).toBe(200);

  path.freeze();
  const limit = DB_CONNECT_TIMEOUT_MS + 3_000;
  for (const [method, target] of [['GET', '/api/executions'], ['GET', '/auth/me'], ['POST', '/auth/logout']]) {
    const res = await timed(b.url, method, target, cookie, limit + 5_000);
    expect(res.status, `${method} ${target} after ${res.ms} ms`).toBe(503);
    expect(res.retryAfter).toBe(String(RETRY_AFTER_SECONDS));
    expect(JSON.parse(res.body)).toMatchObject({ detail: { code: 'database_unavailable' } });
    expect(res.ms).toBeLessThan(limit);
  }
  expect((await http(b.url, 'GET', '/ready')).body.sessions).toBe('unreachable');
  // The logout b could not do left the session as it was: a still lets it in.
  expect((await http(a.url, 'GET', '/auth/me', undefined, cookie)).status).toBe(200);

  // The database answers again (on the same address): b serves the session again.
  await path.cut();
  await path.open();
  await until('b serves the session again', async () => (await http(b.url, 'GET', '/auth/me', undefined, cookie)).status === 200, 15_000, 200);
}, 90_000);
