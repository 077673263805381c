import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Db, DB_IDLE_IN_TRANSACTION_MS } from '../../../src/db/db.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';

// A server stopped mid-transaction (SIGSTOP, a suspended VM) held its row locks for as long as it
// stood still: every other server's work on those rows waited behind it. The service's sessions
// now end a transaction left idle past DB_IDLE_IN_TRANSACTION_MS; what it did rolls back, and the
// stopped side, running again, gets database_unavailable (a 503 and a retry), not a hang.

let t: TestDatabase & { db: Db };
beforeAll(async () => {
  t = await createMigratedDatabase();
  await t.db.query('CREATE TABLE public.idle_probe (id int PRIMARY KEY, n int NOT NULL)');
  await t.db.query('INSERT INTO public.idle_probe VALUES (1, 0)');
});
afterAll(async () => {
  await t?.drop();
});

it("bounds every service session's idle time inside a transaction, bounded pools' too", async () => {
  const db = new Db(t.url, 2);
  try {
    const expected = `${DB_IDLE_IN_TRANSACTION_MS / 1000}s`;
    expect((await db.query<{ v: string }>('SELECT current_setting($1) AS v', ['idle_in_transaction_session_timeout'])).rows[0].v).toBe(expected);
    expect((await db.bounded(1_000, 1).query<{ v: string }>('SELECT current_setting($1) AS v', ['idle_in_transaction_session_timeout'])).rows[0].v).toBe(expected);
  } finally {
    await db.close();
  }
});

it('a transaction that stands still past the bound lets its locks go, rolls back, and fails as database_unavailable', async () => {
  const IDLE_MS = 500;
  const stalled = new Db(t.url, 2, { idleInTransactionMs: IDLE_MS });
  try {
    let locked!: () => void;
    const holds = new Promise<void>((r) => (locked = r));
    const frozen = stalled
      .tx(async (q) => {
        await q.query('UPDATE public.idle_probe SET n = n + 1 WHERE id = 1');
        locked();
        await delay(IDLE_MS * 4); // the process does not run: no statement, no COMMIT
        await q.query('SELECT 1');
      })
      .then(
        () => 'committed',
        (err: unknown) => err,
      );
    await holds;
    const t0 = performance.now();
    // Another server's statement on the same row waits for the lock, then gets it.
    await t.db.query('UPDATE public.idle_probe SET n = n + 10 WHERE id = 1');
    expect(performance.now() - t0).toBeLessThan(IDLE_MS * 4);
    expect(await frozen).toMatchObject({ code: 'database_unavailable' });
    // The stalled update rolled back; the pool goes on with a new connection.
    expect((await t.db.query<{ n: number }>('SELECT n FROM public.idle_probe WHERE id = 1')).rows[0].n).toBe(10);
    expect((await stalled.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
  } finally {
    await stalled.close();
  }
});
