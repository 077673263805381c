import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { Db, DB_CONNECT_TIMEOUT_MS, PING_TIMEOUT_MS } from '../../../src/db/db.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

// A "database" that accepts TCP connections and never says a word: what a hung PostgreSQL
// (or a black-holing proxy in front of one) looks like to the driver.
let silent: Server;
const sockets = new Set<Socket>();
let silentUrl: string;
let t: TestApp;

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const address = silent.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  silentUrl = `postgres://svc:pw@127.0.0.1:${address.port}/svc`;
  t = await startTestApp();
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent?.close(r));
  await t?.close();
});

async function timed<T>(p: Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await p;
  return { value, ms: performance.now() - t0 };
}

describe('health with a database that never answers', () => {
  it('answers 503 with a non-ok status within the ping timeout', async () => {
    const db = new Db(silentUrl, 2);
    const app = await buildApp({ ...t.deps, db, metrics: createMetrics() });
    try {
      for (const url of ['/api/health', '/health']) {
        const { value: res, ms } = await timed(app.inject({ method: 'GET', url }));
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ status: 'degraded', database: 'unreachable' });
        expect(ms).toBeGreaterThanOrEqual(PING_TIMEOUT_MS - 50);
        expect(ms).toBeLessThan(PING_TIMEOUT_MS + 1_500);
      }
    } finally {
      await app.close();
      await db.close();
    }
  });

  it('fails an ordinary query after the connect timeout instead of hanging', async () => {
    const db = new Db(silentUrl, 2);
    try {
      const t0 = performance.now();
      await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: 'database_unavailable', cause: { message: expect.stringMatching(/timeout/i) } });
      expect(performance.now() - t0).toBeLessThan(DB_CONNECT_TIMEOUT_MS + 1_500);
    } finally {
      await db.close();
    }
  });
});

describe('health with a database that takes no writes', () => {
  it("answers 503 read_only while default_transaction_read_only is set for the service's sessions, ok once it is not", async () => {
    // Set on the database (as an operator would, or as a standby is): sessions opened after it take it.
    const name = new URL(t.databaseUrl).pathname.slice(1);
    await t.deps.db.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    const db = new Db(t.databaseUrl, 2);
    const app = await buildApp({ ...t.deps, db, metrics: createMetrics() });
    try {
      for (const url of ['/api/health', '/health']) {
        const res = await app.inject({ method: 'GET', url });
        expect(res.statusCode, url).toBe(503);
        expect(res.headers['retry-after']).toBeDefined();
        expect(res.json()).toEqual({ status: 'degraded', database: 'read_only', bus: 'ok' });
      }
      // The service's own writes are what health speaks for: they fail on such a session.
      await expect(db.query('CREATE TEMP TABLE health_probe (x int)')).rejects.toMatchObject({ code: 'database_unavailable', cause: { code: '25006' } });
    } finally {
      await t.deps.db.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
      await app.close();
      await db.close();
    }
    const writable = new Db(t.databaseUrl, 1);
    try {
      expect(await writable.ping()).toBe('ok');
    } finally {
      await writable.close();
    }
  });
});

describe('health with a full pool', () => {
  it('answers unreachable within the ping timeout while every connection is busy, ok once one is free', async () => {
    const db = new Db(t.databaseUrl, 1);
    let free: () => void = () => {};
    const busy = db.withClient(() => new Promise<void>((r) => (free = r)));
    try {
      await new Promise((r) => setTimeout(r, 100)); // the only connection is now held
      const { value, ms } = await timed(db.ping());
      expect(value).toBe('unreachable');
      expect(ms).toBeLessThan(PING_TIMEOUT_MS + 1_000);
      free();
      await busy;
      expect(await db.ping()).toBe('ok');
    } finally {
      free();
      await busy;
      await db.close();
    }
  });
});
