import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ID_HOLD_MS, MAX_ID_BLOCK, StartPreludeCache } from '../../../actors/start-prelude-cache.ts';
import { insertCatalogVersion } from '../../../src/db/catalog.repo.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

// Start batches take catalog heads and execution ids from memory, reading them (one round trip)
// only when they run out; ids stay unique and increasing, and dense on a quiet server.

let t: Awaited<ReturnType<typeof createMigratedDatabase>>;
let queries = 0;
let q: Queryable;
beforeAll(async () => {
  t = await createMigratedDatabase();
  q = {
    query<R extends pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]) {
      queries++;
      return t.db.query<R>(text, params);
    },
  };
  for (const path of ['p/a', 'p/b']) await insertCatalogVersion(t.db, { path, kind: 'playbook', content: '{}', payload: {} });
});
afterAll(async () => {
  await t?.drop();
});

describe('start prelude cache', () => {
  it('a steady stream of batches reads the database once per block of ids, not once per batch', async () => {
    const cache = new StartPreludeCache(() => 0); // one instant: every refill follows the last closely
    queries = 0;
    const ids: number[] = [];
    for (let i = 0; i < 60; i++) {
      const p = await cache.take(q, ['p/a', 'p/b', 'p/a'], 5);
      expect([...p.heads.keys()].sort()).toEqual(['p/a', 'p/b']);
      ids.push(...p.ids);
    }
    expect(ids).toHaveLength(300);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(300);
    // Blocks double (5, 10, 20, ... up to MAX_ID_BLOCK): a handful of reads for 60 batches.
    expect(queries).toBeLessThanOrEqual(7);
    expect(MAX_ID_BLOCK).toBeGreaterThanOrEqual(64);
  });

  it('heads from memory are listed for the write to verify; heads just read are not', async () => {
    const cache = new StartPreludeCache(() => 0);
    // The first two reads (ids run out: blocks of 1, then 2); the third is served from memory.
    expect((await cache.take(q, ['p/a'], 1)).cached).toEqual([]);
    expect((await cache.take(q, ['p/a'], 1)).cached).toEqual([]);
    queries = 0;
    const fromMemory = await cache.take(q, ['p/a'], 1);
    expect(queries).toBe(0);
    expect(fromMemory.cached).toEqual([expect.objectContaining({ path: 'p/a', version: 1 })]);
    cache.forgetHeads();
    const again = await cache.take(q, ['p/a'], 1);
    expect(queries).toBe(1);
    expect(again.cached).toEqual([]);
  });

  it('an unknown path is read again every time and never cached', async () => {
    const cache = new StartPreludeCache(() => 0);
    queries = 0;
    for (let i = 0; i < 3; i++) expect((await cache.take(q, ['p/none'], 1)).heads.has('p/none')).toBe(false);
    expect(queries).toBe(3);
  });

  it('overlapping takes each get the ids they asked for: one served from memory meanwhile does not leave the waiting one short', async () => {
    const cache = new StartPreludeCache(() => 0);
    await cache.take(q, ['p/a'], 1); // a block of 1
    await cache.take(q, ['p/a'], 1); // a block of 2: one id left in memory
    // The first must read (p/b's head is not in memory) and counts on the id left; the second
    // would be served that id from memory while the first waits.
    const [first, second] = await Promise.all([cache.take(q, ['p/b'], 4), cache.take(q, ['p/a'], 1)]);
    expect(first.ids).toHaveLength(4);
    expect(second.ids).toHaveLength(1);
    expect(new Set([...first.ids, ...second.ids]).size).toBe(5);
    expect([...first.ids, ...second.ids].every((id) => Number.isInteger(id) && id > 0)).toBe(true);
  });

  it('ids held unused longer than ID_HOLD_MS are let go (retention may have dropped their range): the next take reads new ones', async () => {
    let now = 0;
    const cache = new StartPreludeCache(() => now);
    // Two takes at one instant: a block of 1, then of 2, which leaves one id in memory.
    const heldAhead = async () => {
      await cache.take(q, ['p/a'], 1);
      const [last] = (await cache.take(q, ['p/a'], 1)).ids;
      return last + 1;
    };
    const first = await heldAhead();
    now += ID_HOLD_MS - 1;
    expect((await cache.take(q, ['p/a'], 1)).ids).toEqual([first]);
    const second = await heldAhead();
    now += ID_HOLD_MS + 1;
    queries = 0;
    const [late] = (await cache.take(q, ['p/a'], 1)).ids;
    expect(queries).toBe(1);
    expect(late).toBe(second + 1);
  });

  it('after a quiet spell a refill takes only what its batch needs, so ids stay dense', async () => {
    let now = 0;
    const cache = new StartPreludeCache(() => now);
    const taken: number[] = [];
    for (let i = 0; i < 5; i++) {
      now += 5_000;
      taken.push(...(await cache.take(q, ['p/a'], 1)).ids);
    }
    expect(taken.slice(1).map((id, i) => id - taken[i])).toEqual([1, 1, 1, 1]);
  });
});
