// POST /api/postgres/execute without a credential runs its statement on the service database, on a
// connection of its own as the reader role. With that database hanging (stopped: it takes the TCP
// connection and never answers the login), the route answered 400 {"detail": "timeout expired"}
// after 10 s, no Retry-After: as if the statement were wrong, where every other route answers 503
// database_unavailable. Here the database sits behind a TCP proxy that goes silent.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createLocalBus } from '../../../src/bus/command-bus.ts';
import { Db } from '../../../src/db/db.ts';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { startDatabaseProxy, type DatabaseProxy } from '../../helpers/database-proxy.ts';

let t: TestApp;
let proxy: DatabaseProxy;
let app: FastifyInstance;
let db: Db;

beforeAll(async () => {
  t = await startTestApp();
  proxy = await startDatabaseProxy(t.databaseUrl);
  db = new Db(proxy.url, 2);
  app = await buildApp({ ...t.deps, db, metrics: createMetrics(), bus: createLocalBus() });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await db?.close();
  await proxy?.close();
  await t?.close();
});

it('answers 503 database_unavailable with Retry-After, not 400, while the service database hangs', async () => {
  const run = () => app.inject({ method: 'POST', url: '/api/postgres/execute', headers: asWorker, payload: { query: 'SELECT 1 AS one' } });
  const reachable = await run();
  expect(reachable.statusCode, reachable.body).toBe(200);
  expect(reachable.json().result).toEqual([{ one: 1 }]);

  proxy.cut();
  const away = await run();
  expect(away.statusCode, away.body).toBe(503);
  expect(away.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
  expect(away.json()).toEqual({ detail: { code: 'database_unavailable', message: expect.any(String) } });
}, 30_000);
