import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/db.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';

// Db.bounded: connections whose every statement PostgreSQL cancels past the bound (the batch
// accept's deadline), and Db.prepareBounded, which readies them beyond it once.

let t: TestDatabase & { db: Db };
beforeAll(async () => {
  t = await createMigratedDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const BOUND_MS = 100;
const LONGER = { text: 'SELECT pg_sleep(0.3) AS slept' };

describe('bounded connections', () => {
  it('cancel a statement past the bound (57014), with nothing committed', async () => {
    const q = t.db.bounded(BOUND_MS, 2);
    await expect(q.query(LONGER.text)).rejects.toMatchObject({ code: '57014' });
    await expect(q.query(`INSERT INTO core.schema_migration (version) SELECT 'bounded-test' FROM pg_sleep(0.3)`)).rejects.toMatchObject({ code: '57014' });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM core.schema_migration WHERE version = 'bounded-test'`)).rows[0].n).toBe(0);
  });

  it('prepareBounded runs past the bound on every connection of the pool, which is bounded again afterwards', async () => {
    const seen = new Set<number>();
    await t.db.prepareBounded(BOUND_MS, 2, async (q) => {
      const { rows } = await q.query<{ pid: number }>({ name: 'bounded_test_prepared', text: 'SELECT pg_backend_pid() AS pid FROM pg_sleep(0.3)' });
      seen.add(rows[0].pid);
    });
    expect(seen.size).toBe(2);
    const q = t.db.bounded(BOUND_MS, 2);
    // Both connections at once: each is back at its bound, and has the statement prepared.
    const timeouts = await Promise.all([q.query<{ t: string }>('SHOW statement_timeout'), q.query<{ t: string }>('SHOW statement_timeout')]);
    expect(timeouts.map((r) => Object.values(r.rows[0])[0])).toEqual(['100ms', '100ms']);
    const prepared = await Promise.all([0, 1].map(() => q.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'bounded_test_prepared'`)));
    expect(prepared.map((r) => r.rows[0].n)).toEqual([1, 1]);
    await expect(Promise.all([q.query(LONGER.text), q.query(LONGER.text)])).rejects.toMatchObject({ code: '57014' });
  });
});
