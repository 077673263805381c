// POST /api/postgres/execute without a credential runs its statement on the service database, on a
// connection of its own as the reader role. With that database hanging (stopped: it takes the TCP
// connection and never answers the login), the route answered 400 {"detail": "timeout expired"}
// after 10 s, no Retry-After: as if the statement were wrong, where every other route answers 503
// database_unavailable. Here the database sits behind a TCP proxy that goes silent.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createLocalBus } from '../../../src/bus/command-bus.ts';
import { Db } from '../../../src/db/db.ts';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';

let t: TestApp;
let proxy: Server;
let app: FastifyInstance;
let db: Db;
/** While true, the proxy takes connections and sends nothing on: a stopped PostgreSQL. */
let silent = false;
const sockets = new Set<Socket>();

beforeAll(async () => {
  t = await startTestApp();
  const upstream = new URL(t.databaseUrl);
  proxy = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (silent) return;
    const server = connect(Number(upstream.port), upstream.hostname);
    sockets.add(server);
    server.on('close', () => sockets.delete(server));
    server.on('error', () => client.destroy());
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    client.pipe(server).pipe(client);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  const address = proxy.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const url = new URL(t.databaseUrl);
  url.host = `127.0.0.1:${address.port}`;
  // The test database's URL names its Unix socket, which would go round the proxy.
  url.searchParams.delete('host');
  db = new Db(url.toString(), 2);
  app = await buildApp({ ...t.deps, db, metrics: createMetrics(), bus: createLocalBus() });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await db?.close();
  for (const s of sockets) s.destroy();
  await new Promise((ok) => proxy?.close(ok));
  await t?.close();
});

it('answers 503 database_unavailable with Retry-After, not 400, while the service database hangs', async () => {
  const run = () => app.inject({ method: 'POST', url: '/api/postgres/execute', headers: asWorker, payload: { query: 'SELECT 1 AS one' } });
  const reachable = await run();
  expect(reachable.statusCode, reachable.body).toBe(200);
  expect(reachable.json().result).toEqual([{ one: 1 }]);

  silent = true;
  for (const s of sockets) s.destroy();
  const away = await run();
  expect(away.statusCode, away.body).toBe(503);
  expect(away.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
  expect(away.json()).toEqual({ detail: { code: 'database_unavailable', message: expect.any(String) } });
}, 30_000);
