// The command bus's LISTEN connection killed under it (as a database restart or a network fault
// does): it comes back by itself, LISTENs again, and wakes the claimers that waited meanwhile,
// since a NOTIFY sent while it was away is lost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresBus } from '../../../src/bus/postgres.ts';
import type { CommandBus } from '../../../src/bus/command-bus.ts';
import { Db } from '../../../src/db/db.ts';
import { LISTEN_RETRY_MAX_MS, LISTEN_RETRY_MIN_MS, listenRetryDelayMs } from '../../../src/db/listen-connection.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import { DatabasePath } from '../../helpers/database-path.ts';
import { until } from '../../helpers/until.ts';

let t: TestDatabase & { db: Db };
let db: Db;
let bus: CommandBus;
const metrics = createMetrics();

beforeAll(async () => {
  t = await createMigratedDatabase();
  db = new Db(t.url, 2);
  bus = await createPostgresBus(db, { metrics });
});
afterAll(async () => {
  await bus?.close();
  await db?.close();
  await t?.drop();
});

/** Ends the bus's LISTEN session from the server side; resolves with how many it ended. */
async function killListener(): Promise<number> {
  const r = await t.db.query<{ n: number }>(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`,
  );
  return r.rows[0].n;
}

const reconnects = async () => (await metrics.registry.getSingleMetric('svc_bus_reconnects_total')!.get()).values[0]?.value ?? 0;

describe('the bus after its LISTEN connection is killed', () => {
  it('wakes a claimer that waited through the loss, though the NOTIFY sent meanwhile was lost', async () => {
    const waiting = bus.next(20_000);
    const t0 = performance.now();
    expect(await killListener()).toBe(1);
    await t.db.query(`NOTIFY svc_commands, '1'`); // nobody listens now
    expect(await waiting).toBe(true);
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(await reconnects()).toBe(1);
  });

  it('listens again: a NOTIFY after the return wakes the next claimer', async () => {
    await until('the LISTEN session to be back', async () => {
      const r = await t.db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`);
      return r.rows.length === 1;
    });
    const waiting = bus.next(10_000);
    await t.db.query(`NOTIFY svc_commands, '1'`);
    expect(await waiting).toBe(true);
  });

  it('comes back after being killed again and again', async () => {
    for (let i = 0; i < 3; i++) {
      const before = await reconnects();
      await until('a LISTEN session to kill', async () => (await killListener()) === 1);
      await until('the bus to reconnect', async () => (await reconnects()) > before, 10_000);
    }
  });
});

describe('a LISTEN connection that stops answering (a hung database, a path that drops everything)', () => {
  it('counts as lost once it does not answer its check, and listens again once the path is back', async () => {
    const path = DatabasePath.to(t.url);
    await path.open();
    const through = new Db(path.urlThrough(t.url), 2, { listenCheck: { intervalMs: 200, timeoutMs: 300 } });
    const m = createMetrics();
    const frozenBus = await createPostgresBus(through, { metrics: m });
    try {
      expect(frozenBus.connected).toBe(true);
      path.freeze();
      // Open and silent, it passed for listening for as long as the freeze lasted.
      await until('the bus to count its connection lost', () => !frozenBus.connected, 5_000);
      const waiting = frozenBus.next(30_000);
      await path.cut();
      await path.open();
      // Back: the claimer that waited through the loss is woken, and a NOTIFY is heard again.
      expect(await waiting).toBe(true);
      expect(frozenBus.connected).toBe(true);
      const next = frozenBus.next(10_000);
      await t.db.query(`NOTIFY svc_commands, '1'`);
      expect(await next).toBe(true);
      // Closed while the path hangs, it does not wait for an answer that never comes.
      await frozenBus.close();
      path.freeze();
      const closing = performance.now();
      await through.close();
      expect(performance.now() - closing).toBeLessThan(3_000);
    } finally {
      await path.cut();
    }
  }, 60_000);
});

describe('listenRetryDelayMs', () => {
  it('doubles from the minimum to the maximum, jittered down by at most half', () => {
    expect(listenRetryDelayMs(0, () => 1)).toBe(LISTEN_RETRY_MIN_MS);
    expect(listenRetryDelayMs(0, () => 0)).toBe(LISTEN_RETRY_MIN_MS / 2);
    expect(listenRetryDelayMs(3, () => 1)).toBe(LISTEN_RETRY_MIN_MS * 8);
    expect(listenRetryDelayMs(50, () => 1)).toBe(LISTEN_RETRY_MAX_MS);
    expect(listenRetryDelayMs(50, () => 0)).toBe(LISTEN_RETRY_MAX_MS / 2);
  });
});
