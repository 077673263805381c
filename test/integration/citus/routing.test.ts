import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimCommand } from '../../../src/db/command.repo.ts';
import { Db } from '../../../src/db/db.ts';
import { getExecution, loadEventsAfter } from '../../../src/db/execution.repo.ts';
import { migrate } from '../../../src/db/migrate.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { readUnit } from '../../../src/db/unit-read.ts';
import { WRITE_GUARD_SQLSTATE, writeUnit, type UnitWrite } from '../../../src/db/unit-write.ts';
import { EVENT } from '../../../machines/event-types.ts';
import { HOT_STATEMENTS, noUnit, PLACEMENT, policy, sent } from '../../helpers/hot-statements.ts';

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

/**
 * Runs `run` on a connection of its own in a transaction that is rolled back, and closes the
 * connection: Citus 13.2 leaves a session that failed to plan a subquery believing it still
 * plans one, and delegates no function call on it afterwards ("not pushing down function calls
 * in CTEs or Subqueries").
 */
async function rolledBack<T>(pool: pg.Pool, run: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    return await run(c);
  } finally {
    await c.query('ROLLBACK').catch(() => {});
    c.release(true);
  }
}

// --- Shard-local statements ---------------------------------------------------------------------
// Citus refuses most hot statements as one distributed statement, but each keyed one touches a
// single shard group. Run as its own text on that group's shard tables, by a function Citus
// delegates to the node holding the shard (create_distributed_function, colocated with
// execution), the whole statement runs there, as on one PostgreSQL. The wrapper takes the text
// unchanged but for the table names, which it resolves on the node at each call.

/** Tables a shard-local text names by their shard on the node: co-located with execution, and the reference tables (a copy on every node). */
const LOCAL_TABLES = Object.entries(PLACEMENT).filter(([, p]) => p === 'distributed' || p === 'reference').map(([t]) => t);

/** The wrapper's body: the text's tables replaced by the shards that hold `p_exec`'s rows (reference tables: their one shard). */
function wrapperSql(fn: string, text: string, types: string[]): string {
  const named = text.replace(new RegExp(`\\bcore\\.(${LOCAL_TABLES.join('|')})\\b`, 'g'), '{{$1}}');
  const used = LOCAL_TABLES.filter((t) => named.includes(`{{${t}}}`));
  const shardOf = (t: string) =>
    PLACEMENT[t] === 'reference'
      ? `shard_name('core.${t}'::regclass, (SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'core.${t}'::regclass))`
      : `shard_name('core.${t}'::regclass, get_shard_id_for_distribution_column('core.${t}', p_exec))`;
  const params = types.map((t, i) => `p${i + 1} ${t}`);
  return `CREATE FUNCTION ${fn}(p_exec bigint${params.map((p) => `, ${p}`).join('')}) RETURNS SETOF jsonb LANGUAGE plpgsql AS $fn$
DECLARE q text := $text$${named}$text$; r record;
BEGIN
${used.map((t) => `  q := replace(q, '{{${t}}}', ${shardOf(t)});`).join('\n')}
  FOR r IN EXECUTE q${types.length ? ` USING ${types.map((_, i) => `p${i + 1}`).join(', ')}` : ''} LOOP RETURN NEXT to_jsonb(r); END LOOP;
END $fn$`;
}

/**
 * A Queryable whose every statement runs shard-local on the node holding `executionId`'s shard
 * group: the db modules' own functions, unchanged, reach that shard only. Rows come back through
 * jsonb (timestamps as text).
 */
const made = new Set<string>();
function shardLocal(pool: pg.Pool, executionId: number): Queryable & { nodes: Set<string> } {
  const nodes = new Set<string>();
  const query = async (config: string | pg.QueryConfig, params?: unknown[]) => {
    const text = typeof config === 'string' ? config : config.text;
    const values = (typeof config === 'string' ? params : config.values ?? params) ?? [];
    const fn = `core.svc_on_shard_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
    if (!made.has(fn)) {
      const c = await pool.connect();
      try {
        await c.query(`PREPARE svc_types AS ${text}`);
        const { rows } = await c.query<{ types: string[] }>(`SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = 'svc_types'`);
        await c.query('DEALLOCATE svc_types');
        const types = rows[0]?.types ?? [];
        await c.query(`DROP FUNCTION IF EXISTS ${fn}`);
        await c.query(wrapperSql(fn, text, types));
        await c.query(`SELECT create_distributed_function($1::regprocedure, 'p_exec'::text, colocate_with => 'core.execution'::text)`, [`${fn}(bigint${types.map((t) => `, ${t}`).join('')})`]);
      } finally {
        c.release();
      }
      made.add(fn);
    }
    const call = `SELECT * FROM ${fn}(${[executionId, ...values].map((_, i) => `$${i + 1}`).join(', ')}) AS t(r)`;
    const { rows: plan } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${call}`, [executionId, ...values]);
    const explained = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(routingOf(explained), `${fn}: delegated to one node`).toBe('one node');
    for (const m of explained.matchAll(/Node: host=\S+ port=(\d+)/g)) nodes.add(m[1]);
    const { rows } = await pool.query<{ r: object }>(call, [executionId, ...values]);
    return { rows: rows.map((x) => x.r), rowCount: rows.length };
  };
  return { query, nodes } as unknown as Queryable & { nodes: Set<string> };
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
    // One statement at a time, each committed: the last ones reach shards the earlier ones made.
    for (const statement of DDL.split(/;\n/).map((t) => t.replace(/^\s*--.*$/gm, '').trim()).filter(Boolean)) await pool.query(statement);
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

  it('the keyed hot statements run whole on the node of their execution, shard-local: start, claim, hydrate, step write, guard, reads', async () => {
    // Two executions whose shards are on different nodes.
    const { rows: ids } = await pool.query<{ id: number; port: number }>(
      `SELECT DISTINCT ON (n.nodeport) id::int AS id, n.nodeport AS port
         FROM generate_series(1, 64) id
         JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('core.execution', id)
         JOIN pg_dist_node n ON n.groupid = p.groupid
        ORDER BY n.nodeport, id`,
    );
    expect(ids.length, 'a cluster of two worker nodes or more').toBeGreaterThanOrEqual(2);
    const [a, b] = ids;
    const { rows: [cat] } = await pool.query<{ catalog_id: number }>(
      `INSERT INTO core.catalog (path, version, content, payload) VALUES ('citus/p', 1, 'x', '{}') RETURNING catalog_id::int`,
    );
    const onA = shardLocal(pool, a.id);
    const onB = shardLocal(pool, b.id);

    // The start write, each on its execution's node: the row, its first events, two commands (seq
    // 1 to claim by id, seq 2 left pending for a claim-ahead to find). B's first: a pick across
    // executions would take B's, older, before A's.
    const commandOf: Record<number, number[]> = {};
    for (const [id, on] of [[b.id, onB], [a.id, onA]] as const) {
      const issued = (seq: number, ord: number) => ({ execution_id: id, ord, event_type: EVENT.commandIssued, status: null, step: `s${seq}`, command_id: null, worker_id: null, context: {}, result: null, error: null, issued_seq: seq });
      const command = (seq: number) => ({ execution_id: id, catalog_id: cat.catalog_id, seq, step: `s${seq}`, loop_index: null, status: 'PENDING' as const, input: {}, worker_id: null, claim_token: null, priority: 0, limit_name: null, limit_key: null });
      await writeUnit(on, {
        ...noUnit,
        claimPolicy: null,
        newExecutions: [{ execution_id: id, catalog_id: cat.catalog_id, path: 'citus/p', parent_execution_id: null, root_execution_id: id, parent_command_id: null, status: 'running', progress: 0, result: null, error: null, snapshot: null, machine_version: 1, snapshot_event_id: null, last_event_id: 3 }],
        events: [{ ...issued(0, 1), event_type: EVENT.executionStarted, step: null, issued_seq: null }, issued(1, 2), issued(2, 3)],
        commands: [command(1), command(2)],
      });
      const { rows } = await pool.query<{ command_id: number }>('SELECT command_id FROM core.command WHERE execution_id = $1 ORDER BY seq', [id]);
      commandOf[id] = rows.map((r) => Number(r.command_id));
    }

    // The claim by id that names its execution.
    const claimed = await claimCommand(onA, commandOf[a.id][0], 'w1', policy, a.id);
    expect([claimed?.status, claimed?.attempt, claimed?.worker_id]).toEqual(['CLAIMED', 1, 'w1']);

    // The hydrate read: the row, its events after the snapshot, the reported command.
    const read = await readUnit(onA, [a.id], [{ execution_id: a.id, command_id: commandOf[a.id][0] }], new Map(), 1);
    expect(read.executions.map((e) => [e.execution_id, e.last_event_id])).toEqual([[a.id, 3]]);
    expect(read.commands.map((c) => [c.command_id, c.status])).toEqual([[commandOf[a.id][0], 'CLAIMED']]);

    // The report's step write, with claim-ahead: the reporting worker wants one more command.
    // Its pick is per shard: it takes A's pending seq 2, not B's older ones on the other node.
    const report: UnitWrite = {
      ...noUnit,
      claimPolicy: null,
      appends: [{ execution_id: a.id, expected: 3, n: 1, applied: 'all', proj: false, status: null, progress: null, result: null, error: null, snapshot: null, machine_version: null, snapshot_event_id: null }],
      events: [{ execution_id: a.id, ord: 1, event_type: EVENT.commandCompleted, status: null, step: 'a', command_id: commandOf[a.id][0], worker_id: 'w1', context: {}, result: { ok: true }, error: null, issued_seq: null }],
      commandUpdates: [{ execution_id: a.id, command_id: commandOf[a.id][0], status: 'COMPLETED', expected_status: 'CLAIMED', expected_attempt: 1, report_id: null }],
      claimOlder: [{ workerId: 'w1', max: 1, token: null }],
    };
    const written = await writeUnit(onA, report);
    expect(written.claimed.map((c) => [c.execution_id, c.seq, c.worker_id])).toEqual([[a.id, 2, 'w1']]);

    // The guard: the same report again was read at an event id the log has passed.
    await expect(writeUnit(onA, { ...report, claimOlder: [] })).rejects.toMatchObject({ code: WRITE_GUARD_SQLSTATE });

    // The sequential step's write (no pick), on B's node.
    await writeUnit(onB, {
      ...noUnit,
      claimPolicy: null,
      appends: [{ execution_id: b.id, expected: 3, n: 1, applied: 'all', proj: false, status: null, progress: null, result: null, error: null, snapshot: null, machine_version: null, snapshot_event_id: null }],
      events: [{ execution_id: b.id, ord: 1, event_type: EVENT.commandIssued, status: null, step: 'c', command_id: null, worker_id: null, context: {}, result: null, error: null, issued_seq: 3 }],
      commands: [{ execution_id: b.id, catalog_id: cat.catalog_id, seq: 3, step: 'c', loop_index: null, status: 'CLAIMED', input: {}, worker_id: 'w2', claim_token: null, priority: 0, limit_name: null, limit_key: null }],
    });

    // The reads, and what the coordinator sees of both.
    expect((await getExecution(onA, a.id))?.last_event_id).toBe(4);
    expect((await loadEventsAfter(onB, b.id, 0)).map((e) => [e.event_id, e.event_type, e.command_id === null])).toEqual([
      [1, EVENT.executionStarted, true], [2, EVENT.commandIssued, false], [3, EVENT.commandIssued, false], [4, EVENT.commandIssued, false],
    ]);
    const { rows: commands } = await pool.query<{ execution_id: number; seq: number; status: string }>(
      `SELECT execution_id::int, seq, status FROM core.command WHERE execution_id = ANY($1::bigint[]) ORDER BY execution_id, seq`,
      [[a.id, b.id]],
    );
    expect(commands.map((c) => [c.execution_id, c.seq, c.status])).toEqual(
      [[a.id, 1, 'COMPLETED'], [a.id, 2, 'CLAIMED'], [b.id, 1, 'PENDING'], [b.id, 2, 'PENDING'], [b.id, 3, 'CLAIMED']].sort((x, y) => Number(x[0]) - Number(y[0])),
    );
    // Every statement ran on its execution's node, and only there.
    expect([[...onA.nodes], [...onB.nodes]]).toEqual([[String(a.port)], [String(b.port)]]);
  }, 120_000);

  it('a limit key\'s counter is kept by the server\'s statements, not by a trigger on the shards: the trigger reaches only keys on its own node', async () => {
    // One execution per worker node, and for each node a key of a limit stored on it.
    const nodeOf = async (table: string, value: string | number) =>
      (await pool.query<{ port: number }>(
        `SELECT n.nodeport AS port FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid WHERE p.shardid = get_shard_id_for_distribution_column($1, $2::text)`,
        [table, String(value)],
      )).rows[0].port;
    const executions = new Map<number, number>();
    for (let id = 1001; executions.size < 2 && id < 1100; id++) {
      const port = await nodeOf('core.execution', id);
      if (!executions.has(port)) executions.set(port, id);
    }
    const keys = new Map<number, string>();
    for (let i = 1; keys.size < 2 && i < 100; i++) {
      const port = await nodeOf('core.flow_key', `key-${i}`);
      if (!keys.has(port)) keys.set(port, `key-${i}`);
    }
    const [[portA, a], [portB, b]] = [...executions].sort();
    const { rows: [cat] } = await pool.query<{ catalog_id: number }>(
      `INSERT INTO core.catalog (path, version, content, payload) VALUES ('citus/flow', 1, 'x', '{}') RETURNING catalog_id::int`,
    );
    await pool.query(`INSERT INTO core.flow_limit (name, concurrency) VALUES ('citus-flow', 10)`);
    for (const key of keys.values()) await pool.query(`INSERT INTO core.flow_key (name, key, running) VALUES ('citus-flow', $1, 5)`, [key]);
    for (const id of [a, b]) {
      await pool.query(`INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id) VALUES ($1, $2, 'citus/flow', $1)`, [id, cat.catalog_id]);
    }
    let seq = 0;
    /** A command of `execution` holding a slot of `key`; its id. */
    const held = async (execution: number, key: string) =>
      Number((await pool.query<{ command_id: string }>(
        `INSERT INTO core.command (execution_id, catalog_id, seq, step, input, status, limit_name, limit_key) VALUES ($1, $2, $3, 's', '{}', 'CLAIMED', 'citus-flow', $4) RETURNING command_id`,
        [execution, cat.catalog_id, ++seq, key],
      )).rows[0].command_id);
    const running = async (key: string) => (await pool.query<{ running: number }>(`SELECT running FROM core.flow_key WHERE name = 'citus-flow' AND key = $1`, [key])).rows[0].running;
    const complete = (execution: number, command: number) =>
      pool.query(`UPDATE core.command SET status = 'COMPLETED' WHERE execution_id = $1 AND command_id = $2`, [execution, command]);

    // The one-PostgreSQL release trigger (migrations/0021, 0024), put on the shards (Citus takes
    // a trigger on a distributed table only with citus.enable_unsafe_triggers, for the session).
    const ddl = await pool.connect();
    await ddl.query(`SET citus.enable_unsafe_triggers = on`);
    await ddl.query(`CREATE TRIGGER command_flow_release AFTER UPDATE OF status ON core.command
      FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL AND OLD.status IN ('CLAIMED', 'RUNNING') AND NEW.status NOT IN ('CLAIMED', 'RUNNING'))
      EXECUTE FUNCTION core.svc_flow_release_command()`);
    try {
      // A key on the command's node: the trigger keeps it.
      const sameNode = keys.get(portA)!;
      await complete(a, await held(a, sameNode));
      expect(await running(sameNode)).toBe(4);
      // A key on the other node: refused, and the command is not moved either.
      const otherNode = keys.get(portB)!;
      const command = await held(a, otherNode);
      await expect(complete(a, command)).rejects.toThrow('cannot execute a distributed query from a query on a shard');
      expect(await running(otherNode)).toBe(5);
    } finally {
      await ddl.query(`DROP TRIGGER command_flow_release ON core.command`);
      ddl.release(true);
    }

    // What works: the unit's write on its execution's shard, by a function Citus delegates to that
    // node even inside a transaction (force_delegation), and the key's counter moved by a statement
    // of its own to the key's shard, in the same transaction (Citus commits both, or neither).
    await pool.query(`CREATE FUNCTION core.svc_test_release(p_exec bigint, p_command bigint) RETURNS text LANGUAGE sql AS $$
      UPDATE core.command SET status = 'COMPLETED' WHERE execution_id = p_exec AND command_id = p_command AND status = 'CLAIMED' RETURNING limit_key $$`);
    await pool.query(`SELECT create_distributed_function('core.svc_test_release(bigint,bigint)', 'p_exec', colocate_with => 'core.execution', force_delegation => true)`);
    const otherNode = keys.get(portB)!;
    for (const outcome of ['ROLLBACK', 'COMMIT'] as const) {
      const command = await held(a, otherNode);
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const { rows: [released] } = await c.query<{ key: string }>(`SELECT core.svc_test_release($1, $2) AS key`, [a, command]);
        await c.query(`UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = 'citus-flow' AND key = $1`, [released.key]);
        await c.query(outcome);
      } finally {
        c.release();
      }
      const { rows: [row] } = await pool.query<{ status: string }>(`SELECT status FROM core.command WHERE execution_id = $1 AND command_id = $2`, [a, command]);
      expect([outcome, row.status, await running(otherNode)]).toEqual(outcome === 'COMMIT' ? ['COMMIT', 'COMPLETED', 4] : ['ROLLBACK', 'CLAIMED', 5]);
    }
  });

  it('the workers\' claim per shard group, in one transaction: a shard-local pick by priority that skips locked rows, room taken on each key\'s shard, then the claim', async () => {
    // Two executions of one shard group: the pick of a shard group sees both.
    const { rows: group } = await pool.query<{ id: number }>(
      `SELECT id::int AS id FROM (SELECT id, get_shard_id_for_distribution_column('core.execution', id) AS shard, count(*) OVER (PARTITION BY get_shard_id_for_distribution_column('core.execution', id)) AS n
         FROM generate_series(3001, 3100) id) g WHERE n >= 2 ORDER BY shard, id LIMIT 2`,
    );
    const [x, y] = group.map((r) => r.id);
    const { rows: [cat] } = await pool.query<{ catalog_id: number }>(
      `INSERT INTO core.catalog (path, version, content, payload) VALUES ('citus/claim', 1, 'x', '{}') RETURNING catalog_id::int`,
    );
    await pool.query(`INSERT INTO core.flow_limit (name, concurrency) VALUES ('citus-claim', 1)`);
    await pool.query(`INSERT INTO core.flow_key (name, key, running, capacity) VALUES ('citus-claim', 'one', 0, 1)`);
    for (const id of [x, y]) await pool.query(`INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id) VALUES ($1, $2, 'citus/claim', $1)`, [id, cat.catalog_id]);
    /** Issues a pending command; its id. */
    const issue = async (execution: number, seq: number, priority: number, limited: boolean) =>
      Number((await pool.query<{ command_id: string }>(
        `INSERT INTO core.command (execution_id, catalog_id, seq, step, input, status, priority, limit_name, limit_key) VALUES ($1, $2, $3, 's', '{}', 'PENDING', $4, $5, $6) RETURNING command_id`,
        [execution, cat.catalog_id, seq, priority, limited ? 'citus-claim' : null, limited ? 'one' : null],
      )).rows[0].command_id);
    const top = await issue(y, 1, 9, true);
    const second = await issue(x, 1, 5, false);
    const third = await issue(x, 2, 5, false);
    const last = await issue(y, 2, 1, false);

    // The shard group's pick and claim, as functions Citus delegates to the group's node inside a
    // transaction (force_delegation); each names the group's shard of command at the call.
    const shardOf = `shard_name('core.command'::regclass, get_shard_id_for_distribution_column('core.command', p_exec))`;
    await pool.query(`CREATE FUNCTION core.svc_test_pick(p_exec bigint, p_n int) RETURNS TABLE (command_id bigint, limit_name text, limit_key text) LANGUAGE plpgsql AS $fn$
      BEGIN RETURN QUERY EXECUTE format('SELECT o.command_id, o.limit_name, o.limit_key FROM %s o WHERE o.status = ''PENDING'' ORDER BY o.priority DESC, o.command_id LIMIT $1 FOR UPDATE SKIP LOCKED', ${shardOf}) USING p_n; END $fn$`);
    await pool.query(`CREATE FUNCTION core.svc_test_claim(p_exec bigint, p_ids bigint[], p_worker text) RETURNS SETOF bigint LANGUAGE plpgsql AS $fn$
      BEGIN RETURN QUERY EXECUTE format('UPDATE %s SET status = ''CLAIMED'', worker_id = $2 WHERE command_id = ANY($1) RETURNING command_id', ${shardOf}) USING p_ids, p_worker; END $fn$`);
    for (const fn of ['core.svc_test_pick(bigint,int)', 'core.svc_test_claim(bigint,bigint[],text)']) {
      await pool.query(`SELECT create_distributed_function($1::regprocedure, 'p_exec', colocate_with => 'core.execution', force_delegation => true)`, [fn]);
    }
    const picked = async (c: pg.PoolClient, n: number) =>
      (await c.query<{ command_id: string; limit_name: string | null; limit_key: string | null }>(`SELECT * FROM core.svc_test_pick($1, $2)`, [x, n])).rows;

    const a = await pool.connect();
    const b = await pool.connect();
    try {
      await a.query('BEGIN');
      // Priority across the group's executions, limited or not: the limited 9, then the older 5.
      const aPick = await picked(a, 2);
      expect(aPick.map((r) => Number(r.command_id))).toEqual([top, second]);
      // Another claimer meanwhile skips what A holds, in its own transaction or not.
      expect((await picked(b, 10)).map((r) => Number(r.command_id))).toEqual([third, last]);
      // A takes the limited command's room on its key's shard (a router statement), then claims
      // what got room on the group's node: the rows it locked in its first call are still its own.
      const room = await a.query(`UPDATE core.flow_key SET running = running + 1 WHERE name = 'citus-claim' AND key = 'one' AND running + 1 <= capacity RETURNING key`);
      expect(room.rowCount).toBe(1);
      const claimed = (await a.query<{ id: string }>(`SELECT * FROM core.svc_test_claim($1, $2::bigint[], 'wA') AS id`, [x, [top, second]])).rows;
      expect(claimed.map((r) => Number(r.id)).sort()).toEqual([top, second].sort());
      await a.query('COMMIT');

      // The key is full now: a second claimer's pick takes the rest, and no room is left for a limited one.
      await b.query('BEGIN');
      expect((await picked(b, 10)).map((r) => Number(r.command_id))).toEqual([third, last]);
      expect((await b.query(`UPDATE core.flow_key SET running = running + 1 WHERE name = 'citus-claim' AND key = 'one' AND running + 1 <= capacity RETURNING key`)).rowCount).toBe(0);
      await b.query('ROLLBACK');
    } finally {
      a.release(true);
      b.release(true);
    }
    const { rows } = await pool.query<{ command_id: string; status: string; worker_id: string | null }>(
      `SELECT command_id, status, worker_id FROM core.command WHERE execution_id = ANY($1::bigint[]) ORDER BY command_id`, [[x, y]],
    );
    expect(rows.map((r) => [Number(r.command_id), r.status, r.worker_id])).toEqual(
      [[top, 'CLAIMED', 'wA'], [second, 'CLAIMED', 'wA'], [third, 'PENDING', null], [last, 'PENDING', null]].sort((p, q) => Number(p[0]) - Number(q[0])),
    );
    expect((await pool.query(`SELECT running FROM core.flow_key WHERE name = 'citus-claim' AND key = 'one'`)).rows[0].running).toBe(1);
  });

  it('the table above names every hot statement', () => {
    expect(Object.keys(ROUTING).sort()).toEqual(HOT_STATEMENTS.map((s) => s.name).sort());
  });
});
