// The first POST /api/postgres/execute without a credential (and the first GET
// /api/worker/service-reader) gives the service database's reader role its login: an ALTER ROLE.
// With the database taking no writes for now (a standby after a failover, default_transaction_read_only),
// that write's 25006 was answered 400 "SQL against the service database is unavailable: role ...
// cannot be given a login (database_unavailable)": a request error no client sends again, where every
// other write answers 503 database_unavailable with Retry-After until writes are taken again.
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
let name = '';

beforeAll(async () => {
  t = await startTestApp();
  name = new URL(t.databaseUrl).pathname.slice(1);
});
afterAll(async () => {
  await t?.deps.db.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`).catch(() => {});
  await t?.close();
});

/** An app like the test app on sessions opened now, which take the database's read-only default. */
async function readOnlyApp(): Promise<{ app: FastifyInstance; db: Db }> {
  await t.deps.db.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
  const db = new Db(t.databaseUrl, 2);
  const app = await buildApp({ ...t.deps, db, metrics: createMetrics(), bus: createLocalBus() });
  await app.ready();
  return { app, db };
}

it('answers 503 database_unavailable, not 400, when the reader role cannot be given its login for want of writes', async () => {
  const { app, db } = await readOnlyApp();
  try {
    const res = await app.inject({ method: 'POST', url: '/api/postgres/execute', headers: asWorker, payload: { query: 'SELECT 1 AS one' } });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(res.json()).toEqual({ detail: { code: 'database_unavailable', message: expect.any(String) } });
  } finally {
    await app.close();
    await db.close();
  }
  // Writes taken again: the same request gives the login and runs.
  await t.deps.db.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
  const res = await t.app.inject({ method: 'POST', url: '/api/postgres/execute', headers: asWorker, payload: { query: 'SELECT 1 AS one' } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().result).toEqual([{ one: 1 }]);
});
