import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptBatches } from '../../../src/db/batch-accept.repo.ts';
import { claimBatches, endBatches, itemRecords } from '../../../src/db/batch.repo.ts';
import { insertCatalogVersion } from '../../../src/db/catalog.repo.ts';
import type { Db } from '../../../src/db/db.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';

// The batch statements run as generic plans (the accept's connections force them, and prepared
// statements settle on them), which cannot see how few rows a jsonb parameter holds. A plan that
// reaches batch requests or executions by scanning the table costs in proportion to the table:
// with 48 h of batches kept, every accept would read all of them. Over tables of some size, each
// statement's generic plan must reach those rows by key.

const EXECUTIONS = 64;
const BATCHES = 3000;
const YAML = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: plans, path: plans/one }\nworkflow:\n  - step: s\n    tool: { name: t, kind: noop }\n`;

let t: TestDatabase & { db: Db };

beforeAll(async () => {
  t = await createMigratedDatabase();
  const parsed = parsePlaybook(YAML);
  if (!parsed.ok) throw new Error('playbook does not parse');
  const catalog = await insertCatalogVersion(t.db, { path: 'plans/one', kind: 'playbook', content: YAML, payload: parsed.playbook });
  await t.db.query(
    `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status)
     SELECT i, $1, 'plans/one', i, CASE WHEN i % 10 = 0 THEN 'running' ELSE 'completed' END FROM generate_series(1, $2::int) AS i`,
    [catalog.catalog_id, EXECUTIONS],
  );
  await t.db.query(
    `INSERT INTO core.batch_request (request_id, execution_id, key_scope, idempotency_key, body_hash, event_ids, queue_depth, state, routed_at)
     SELECT gen_random_uuid(), 1 + i % $1::int, 'scope', 'key-' || i, 'h', ARRAY[i]::bigint[], 0, 'completed', now()
       FROM generate_series(1, $2::int) AS i`,
    [EXECUTIONS, BATCHES],
  );
  await t.db.query('ANALYZE core.execution; ANALYZE core.batch_request');
}, 60_000);
afterAll(async () => {
  await t?.drop();
});

/** Records the statement a repository function sends, answering it with no rows. */
function recorder(): { q: Queryable; sent: () => { text: string; values: unknown[] } } {
  let sent: { text: string; values: unknown[] } | undefined;
  const q = {
    query: async (config: unknown) => {
      const c = config as { text: string; values?: unknown[] };
      sent = { text: c.text, values: c.values ?? [] };
      return { rows: [], rowCount: 0 };
    },
  } as unknown as Queryable;
  return { q, sent: () => sent ?? { text: '', values: [] } };
}

/** A parameter value as SQL text for EXECUTE (arrays of numbers or strings, scalars). */
function literal(db: Db, value: unknown): Promise<string> {
  return db.query<{ l: string }>('SELECT quote_literal($1::text) AS l', [Array.isArray(value) ? `{${value.map((v) => JSON.stringify(v)).join(',')}}` : String(value)]).then((r) => r.rows[0].l);
}

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Index Cond'?: string; Plans?: PlanNode[] };

/** The generic plan PostgreSQL keeps for the statement, with these values. */
async function genericPlan(sent: { text: string; values: unknown[] }): Promise<PlanNode> {
  const args = await Promise.all(sent.values.map((v) => literal(t.db, v)));
  return t.db.withClient(async (c) => {
    await c.query("SET plan_cache_mode = 'force_generic_plan'");
    await c.query(`PREPARE plan_under_test AS ${sent.text}`);
    try {
      const { rows } = await c.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE plan_under_test(${args.join(', ')})`);
      return rows[0]['QUERY PLAN'][0].Plan;
    } finally {
      await c.query('DEALLOCATE plan_under_test');
      await c.query('RESET plan_cache_mode');
    }
  });
}

// The queue depth counts unfinished batches up to a limit over their partial index: a bounded read.
const BOUNDED_INDEXES = new Set(['batch_request_pending_idx']);

/** Reads of `tables` that visit the whole table or a whole index (no index condition), as "node on table". */
function wholeTableReads(plan: PlanNode, tables: string[]): string[] {
  const out: string[] = [];
  const walk = (n: PlanNode) => {
    const table = n['Relation Name'];
    const scan = n['Node Type'];
    if (table && tables.includes(table)) {
      if (scan === 'Seq Scan') out.push(`${scan} on ${table}`);
      if ((scan === 'Index Scan' || scan === 'Index Only Scan') && !n['Index Cond'] && !BOUNDED_INDEXES.has(n['Index Name'] ?? '')) out.push(`${scan} on ${table} (${n['Index Name']}, whole)`);
    }
    for (const child of n.Plans ?? []) walk(child);
  };
  walk(plan);
  return out;
}

/** Scans of the partitioned log (core.event, its partitions) anywhere in a plan. */
function logScans(plan: PlanNode): string[] {
  const out: string[] = [];
  const walk = (n: PlanNode) => {
    const table = n['Relation Name'];
    if (table && /^event(_|$)/.test(table) && n['Node Type'] !== 'ModifyTable') out.push(`${n['Node Type']} on ${table}`);
    for (const child of n.Plans ?? []) walk(child);
  };
  walk(plan);
  return out;
}

describe('batch statements reach rows by key in their generic plans', () => {
  it('the accept: executions, and stored batches by idempotency key', async () => {
    const r = recorder();
    const events = [{ event_type: 'call.done', command_id: 1, context: {} }];
    await acceptBatches(r.q, [
      { pos: 0, request_id: '00000000-0000-4000-8000-000000000001', execution_id: 10, worker_id: 'w', key_scope: 'scope', idempotency_key: 'new-1', body_hash: 'h', events },
      { pos: 1, request_id: '00000000-0000-4000-8000-000000000002', execution_id: 20, worker_id: 'w', key_scope: 'scope', idempotency_key: 'key-7', body_hash: 'h', events },
    ], 1_000);
    expect(wholeTableReads(await genericPlan(r.sent()), ['batch_request', 'execution'])).toEqual([]);
  });

  it('the end of a call: its batches and their executions', async () => {
    const r = recorder();
    await endBatches(r.q, 'complete', [10, 20].map((execution_id, i) => ({
      batch_id: i + 1,
      execution_id,
      worker_id: 'w',
      state: 'completed' as const,
      event_type: 'batch.completed' as const,
      context: {},
      result: { context: {} },
      error: null,
      commands_generated: 0,
      message: 'completed',
    })));
    expect(wholeTableReads(await genericPlan(r.sent()), ['batch_request', 'execution'])).toEqual([]);
  });

  it('reading the records at batches\' ids', async () => {
    const records = recorder();
    await itemRecords(records.q, [{ batch_id: 1, execution_id: 10, event_ids: [4, 5] }]);
    expect(wholeTableReads(await genericPlan(records.sent()), ['event', 'command'])).toEqual([]);
  });

  it('a claim: the heads of unfinished batches (their partial index), and the batches of executions by key', async () => {
    for (const pick of [{ next: 4, leaseSeconds: 20 }, { executions: [10, 20] }]) {
      const r = recorder();
      await claimBatches(r.q, pick, 512);
      expect(wholeTableReads(await genericPlan(r.sent()), ['batch_request'])).toEqual([]);
    }
  });

  // They lock or update rows: a recheck of a row another transaction changed would initialise a
  // log scan's run-time partition pruning again in memory PostgreSQL 18.4 frees too early (a
  // backend killed by signal 11). They ask core.svc_event_written instead.
  it('the claim and the end do not scan the log themselves', async () => {
    const plans: PlanNode[] = [];
    for (const pick of [{ next: 4, leaseSeconds: 20 }, { executions: [10, 20] }]) {
      const r = recorder();
      await claimBatches(r.q, pick, 512);
      plans.push(await genericPlan(r.sent()));
    }
    for (const event of ['complete', 'fail'] as const) {
      const r = recorder();
      const state = event === 'complete' ? ('completed' as const) : ('failed' as const);
      await endBatches(r.q, event, [{ batch_id: 1, execution_id: 10, worker_id: 'w', state, event_type: event === 'complete' ? 'batch.completed' : 'batch.failed', context: {}, result: { context: {} }, error: null, commands_generated: 0, message: state }]);
      plans.push(await genericPlan(r.sent()));
    }
    expect(plans.flatMap(logScans)).toEqual([]);
  });
});
