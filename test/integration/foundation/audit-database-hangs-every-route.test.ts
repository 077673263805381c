// Every documented route, its caches warm, while the database hangs (stopped: connections open, no
// answer, new ones taken and never answered): 503 with Retry-After and the route's code within
// the bounds docs/operations.md gives (a connection in 5 s, an answer in 10 s), never a 400, a
// 500 or a hang. foundation/database-unavailable.test.ts has the database refusing connections;
// a hang reached routes that open a connection of their own (POST /api/postgres/execute answered
// 400 "timeout expired"). The database sits behind a TCP proxy that stops passing bytes.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createLocalBus } from '../../../src/bus/command-bus.ts';
import { Db, DB_ANSWER_TIMEOUT_MS, DB_CONNECT_TIMEOUT_MS } from '../../../src/db/db.ts';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { startDatabaseProxy, type DatabaseProxy } from '../../helpers/database-proxy.ts';
import { REQUESTS, type RouteRequest } from '../../helpers/route-requests.ts';

/** Longest an answer may take: the longer of the two bounds, and a loaded machine's margin. */
const ANSWER_MAX_MS = Math.max(DB_CONNECT_TIMEOUT_MS, DB_ANSWER_TIMEOUT_MS) + 5_000;

let t: TestApp;
let proxy: DatabaseProxy;
let app: FastifyInstance;
let db: Db;
let base = '';

beforeAll(async () => {
  t = await startTestApp();
  proxy = await startDatabaseProxy(t.databaseUrl);
  db = new Db(proxy.url, 4);
  app = await buildApp({ ...t.deps, db, metrics: createMetrics(), bus: createLocalBus() });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await proxy?.close();
  await db?.close();
  await t?.close();
});

async function send(r: RouteRequest): Promise<{ status: number; retryAfter: string | null; text: string; ms: number }> {
  const t0 = Date.now();
  const res = await fetch(base + r.url, {
    method: r.method,
    headers: { ...asWorker, ...r.headers, ...(r.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: r.body === undefined ? undefined : JSON.stringify(r.body),
    signal: AbortSignal.timeout(ANSWER_MAX_MS + 10_000),
  });
  // A stream that opened would never end: its status is the answer.
  const text = res.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await res.text();
  if (!text) await res.body?.cancel();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text, ms: Date.now() - t0 };
}

it('answers 503 with Retry-After on every route, within the bounds, while the database hangs', async () => {
  // Warm: whatever a route keeps (the reader role's name, pooled connections) is there.
  for (const r of REQUESTS) expect((await send(r)).status, `${r.method} ${r.url}`).toBeLessThan(500);

  proxy.hang();
  const answers = await Promise.all(REQUESTS.map(async (r) => ({ r, a: await send(r) })));
  const wrong: string[] = [];
  for (const { r, a } of answers) {
    const said = `${r.method} ${r.url}: ${a.status} in ${a.ms} ms, Retry-After ${a.retryAfter}: ${a.text.slice(0, 200)}`;
    if (r.needsNoDatabase) {
      if (a.status !== 200) wrong.push(said);
      continue;
    }
    const health = r.route === '/api/health' || r.route === '/health';
    const detailCode = health ? undefined : (JSON.parse(a.text || '{}') as { detail?: { code?: string } }).detail?.code;
    if (a.status !== 503 || a.retryAfter !== String(RETRY_AFTER_SECONDS) || a.ms > ANSWER_MAX_MS) wrong.push(said);
    else if (!health && r.route.endsWith('/stream') === false && detailCode !== (r.code ?? 'database_unavailable')) wrong.push(said);
    else if (/\bat \S+ \(|\.ts:\d+/.test(a.text)) wrong.push(`stack trace: ${said}`);
  }
  expect(wrong).toEqual([]);
}, 60_000);
