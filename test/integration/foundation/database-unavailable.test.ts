// With the database away, every route answers 503 with Retry-After and
// {detail: {code: 'database_unavailable', message}}: never a 500, never a hang.
import { createServer, type Server, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createLocalBus } from '../../../src/bus/command-bus.ts';
import { Db, DB_CONNECT_TIMEOUT_MS } from '../../../src/db/db.ts';
import { freePort } from '../../helpers/ports.ts';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { REQUESTS } from '../../helpers/route-requests.ts';

let t: TestApp;
let away: { app: FastifyInstance; db: Db };

/** An app like the test app, but on a database URL where nothing listens (a stopped PostgreSQL). */
async function appOn(url: string): Promise<{ app: FastifyInstance; db: Db }> {
  const db = new Db(url, 2);
  const app = await buildApp({ ...t.deps, db, metrics: createMetrics(), bus: createLocalBus() });
  await app.ready();
  return { app, db };
}

beforeAll(async () => {
  t = await startTestApp();
  away = await appOn(`postgres://svc:pw@127.0.0.1:${await freePort()}/svc`);
});
afterAll(async () => {
  await away?.app.close();
  await away?.db.close();
  await t?.close();
});

function expectUnavailable(res: { statusCode: number; headers: Record<string, unknown>; body: string }, what: string) {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(503);
  expect(res.headers['retry-after'], what).toBe(String(RETRY_AFTER_SECONDS));
  expect(res.body, what).not.toMatch(/\bat \S+ \(|\.ts:\d+|ECONNREFUSED|127\.0\.0\.1/);
}

describe('the database away', () => {
  it('answers 503 with Retry-After and a database_unavailable detail on every documented route', async () => {
    // Every route of the OpenAPI document has a request above.
    const documented = Object.entries((away.app.swagger() as { paths: Record<string, object> }).paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const covered = new Set(REQUESTS.map((r) => `${r.method} ${r.route}`));
    expect(documented.filter((r) => !covered.has(r))).toEqual([]);

    for (const r of REQUESTS) {
      const what = `${r.method} ${r.url}`;
      const res = await away.app.inject({ method: r.method, url: r.url, headers: { ...asWorker, ...r.headers }, ...(r.body === undefined ? {} : { payload: r.body as object }) });
      // A route that reads nothing from the database (the built-in credential types) still answers.
      if (r.needsNoDatabase) {
        expect(res.statusCode, what).toBe(200);
        continue;
      }
      expectUnavailable(res, what);
      // The health routes answer their own shape: which part is away.
      if (r.route !== '/api/health' && r.route !== '/health') expect(res.json(), what).toEqual({ detail: { code: r.code ?? 'database_unavailable', message: expect.any(String) } });
    }
    // The same requests against a reachable database get no 503: the requests were not at fault.
    for (const r of REQUESTS) {
      const res = await t.app.inject({ method: r.method, url: r.url, headers: { ...asWorker, ...r.headers }, ...(r.body === undefined ? {} : { payload: r.body as object }) });
      expect(res.statusCode, `${r.method} ${r.url}: ${res.body}`).not.toBeGreaterThanOrEqual(500);
    }
  });

  it('answers 503 once the connect timeout passes when the database accepts connections and never speaks', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const hung = await appOn(`postgres://svc:pw@127.0.0.1:${address.port}/svc`);
    try {
      const t0 = performance.now();
      const res = await hung.app.inject({ method: 'POST', url: '/api/run/playbook', headers: asWorker, payload: { path: 'a/b' } });
      expectUnavailable(res, 'run against a silent database');
      expect(performance.now() - t0).toBeLessThan(DB_CONNECT_TIMEOUT_MS + 2_000);
    } finally {
      await hung.app.close();
      await hung.db.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('answers 503 while the database refuses new sessions (ALLOW_CONNECTIONS false: SQLSTATE 55000)', async () => {
    const db = new Db(t.databaseUrl, 1);
    const name = new URL(t.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: 'database_unavailable' });
      const refusing = await buildApp({ ...t.deps, db, metrics: createMetrics(), bus: createLocalBus() });
      try {
        expectUnavailable(await refusing.inject({ method: 'GET', url: '/api/executions', headers: asWorker }), 'list while sessions are refused');
      } finally {
        await refusing.close();
      }
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
      await db.close();
    }
  });

  it('lives through a checked-out connection losing its backend between two queries (57P01: no unhandled error event)', async () => {
    const db = new Db(t.databaseUrl, 1);
    try {
      const work = db.withClient(async (c) => {
        const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await t.deps.db.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        await new Promise((r) => setTimeout(r, 300)); // the termination arrives while nothing runs on it
        await c.query('SELECT 1');
      });
      await expect(work).rejects.toMatchObject({ code: 'database_unavailable' });
      // The pool dropped the broken connection: the next query gets a fresh one.
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });
});
