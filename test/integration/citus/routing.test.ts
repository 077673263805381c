import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { HOT_STATEMENTS, PLACEMENT, sent } from '../../helpers/hot-statements.ts';

// The Citus plan of docs/scaling.md on a real cluster: the migrations, then the plan's DDL
// (test/fixtures/citus-distribute.sql), then how Citus plans each hot statement as its module
// sends it. SVC_TEST_CITUS_URL names a database on a Citus coordinator whose workers are added;
// the test drops and makes schema `core` in it. Without it the test is skipped: Citus is not in
// Debian's packages (docs/scaling.md says how it was built here).

const CITUS_URL = process.env.SVC_TEST_CITUS_URL;
const DDL = readFileSync(new URL('../../fixtures/citus-distribute.sql', import.meta.url), 'utf8');

/** How Citus 13.2 plans a statement: on one node, over several, only on the coordinator, or not at all (why). */
type Routing = 'one node' | 'several nodes' | 'coordinator' | `refused: ${string}`;

/**
 * Measured on Citus 13.2.2 (PostgreSQL 15), 2026-11-25: the table of docs/scaling.md, "The hot
 * statements under Citus". A statement that changes how it is planned fails here until the doc
 * says so.
 */
const ROUTING: Record<string, Routing> = {
  // The unit write's CTEs insert from a recordset (Citus pulls INSERT ... SELECT through the
  // coordinator) and its claim plans are recursive: every text is refused as one statement. Run
  // on the shard's own tables by a delegated function, the text runs whole on one node (below).
  'unit write (src/db/unit-write.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'unit write without claim-ahead\'s pick (src/db/unit-write.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'start write (src/db/unit-write.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'step write (src/db/unit-write.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'step write with stranded commands announced (src/db/unit-write.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'step write without claim-ahead\'s pick (src/db/unit-write.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'unit write freeing a limit\'s slot (src/db/unit-write.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  // A modification may not call now() under CASE (Citus evaluates it on the coordinator).
  'claim by id (src/db/command.repo.ts)': 'refused: non-IMMUTABLE functions are not allowed in CASE or COALESCE statements',
  'claim by id with its execution (src/db/command.repo.ts)': 'refused: non-IMMUTABLE functions are not allowed in CASE or COALESCE statements',
  'claim next (src/db/command.repo.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'claim next or stranded (src/db/command.repo.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'claim sent again (src/db/command.repo.ts)': 'several nodes',
  'hydrate read (src/db/unit-read.ts)': 'refused: correlated subqueries are not supported when the FROM clause contains a subquery without FROM',
  'execution row (src/db/execution.repo.ts)': 'one node',
  'events after (src/db/execution.repo.ts)': 'refused: complex joins are only supported when all distributed tables are co-located and joined on their distribution columns',
  'child reads (src/db/execution.repo.ts)': 'several nodes',
  'new execution ids (src/db/execution.repo.ts)': 'coordinator',
  'start prelude (src/db/start-prelude.ts)': 'one node',
  'batch accept (src/db/batch-accept.repo.ts)': 'refused: could not run distributed query with FOR UPDATE/SHARE commands',
  'batch claim, next heads (src/db/batch.repo.ts)': 'refused: could not run distributed query with FOR UPDATE/SHARE commands',
  'batch claim, named executions (src/db/batch.repo.ts)': 'refused: non-IMMUTABLE functions are not allowed in the RETURNING clause',
  'batch commands named (src/db/batch.repo.ts)': 'one node',
  'batch item records (src/db/batch.repo.ts)': 'one node',
  'batch end (src/db/batch.repo.ts)': 'refused: STABLE functions used in UPDATE queries cannot be called with column references',
  'admitter (src/db/flow.repo.ts)': 'refused: recursive CTEs are only supported when they contain a filter on the distribution column',
  'debounce extension (src/db/flow.repo.ts)': 'several nodes',
  'due waits (src/db/wait.repo.ts)': 'several nodes',
};

/** How Citus planned `plan` (EXPLAIN's text): the nodes its tasks run on, and whether it needed subplans. */
function routingOf(plan: string): Routing {
  if (!/Custom Scan \(Citus /.test(plan)) return 'coordinator';
  const tasks = [...plan.matchAll(/Task Count: (\d+)/g)].map((m) => Number(m[1]));
  const nodes = new Set([...plan.matchAll(/Node: host=\S+ port=(\d+)/g)].map((m) => m[1]));
  return tasks.every((n) => n === 1) && nodes.size <= 1 && !/Distributed Subplan/.test(plan) ? 'one node' : 'several nodes';
}

/** Runs `sql` with `values` in a transaction that is rolled back, on one connection of `pool`. */
async function rolledBack<T>(pool: pg.Pool, run: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    return await run(c);
  } finally {
    await c.query('ROLLBACK').catch(() => {});
    c.release();
  }
}

describe.skipIf(!CITUS_URL)('the Citus plan on a Citus cluster (SVC_TEST_CITUS_URL)', () => {
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: CITUS_URL, max: 2 });
    await pool.query('DROP SCHEMA IF EXISTS core CASCADE');
    const db = new Db(CITUS_URL ?? '', 2);
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    await pool.query(DDL);
  }, 120_000);

  afterAll(async () => {
    await pool?.end();
  });

  it('places every table as the plan says', async () => {
    const { rows } = await pool.query<{ table: string; method: string; column: string | null; colocated: boolean }>(
      `SELECT p.logicalrelid::regclass::text AS table, p.partmethod AS method,
              CASE WHEN p.partmethod = 'h' THEN column_to_column_name(p.logicalrelid, p.partkey) END AS column,
              p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'core.execution'::regclass) AS colocated
         FROM pg_dist_partition p
        WHERE NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = p.logicalrelid)`,
    );
    const placed = Object.fromEntries(rows.map((r) => [r.table.replace(/^core\./, ''), r]));
    for (const [table, where] of Object.entries(PLACEMENT)) {
      const p = placed[table];
      if (where === 'distributed') expect([p?.method, p?.column, p?.colocated], table).toEqual(['h', 'execution_id', true]);
      else if (where === 'reference') expect(p?.method, table).toBe('n');
      else if (where.startsWith('own key: ')) expect([p?.method, p?.column], table).toEqual(['h', where.slice('own key: '.length)]);
      // On the coordinator: not distributed (a Citus local table where keys chain it to a reference table).
      else if (where === 'coordinator') expect(p === undefined || p.method === 'n', table).toBe(true);
    }
    // Reference tables are replicated to every node; Citus local tables live on the coordinator only.
    const { rows: kinds } = await pool.query<{ table: string; kind: string }>(
      `SELECT table_name::text AS table, citus_table_type AS kind FROM citus_tables`,
    );
    const kind = Object.fromEntries(kinds.map((k) => [k.table.replace(/^core\./, ''), k.kind]));
    for (const [table, where] of Object.entries(PLACEMENT)) if (where === 'reference') expect(kind[table], table).toBe('reference');
  });

  it.each(HOT_STATEMENTS.map((s) => [s.name, s] as const))('%s', async (name, s) => {
    const { text, values } = await sent(s);
    const routing = await rolledBack(pool, async (c): Promise<Routing> => {
      try {
        const { rows } = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values);
        return routingOf(rows.map((r) => r['QUERY PLAN']).join('\n'));
      } catch (err) {
        return `refused: ${err instanceof Error ? err.message : String(err)}`;
      }
    });
    expect(routing).toBe(ROUTING[name]);
  });

  it('the table above names every hot statement', () => {
    expect(Object.keys(ROUTING).sort()).toEqual(HOT_STATEMENTS.map((s) => s.name).sort());
  });
});
