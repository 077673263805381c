import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { acceptBatches } from '../../../src/db/batch-accept.repo.ts';
import { claimBatches, endBatches, itemRecords, noteIssued } from '../../../src/db/batch.repo.ts';
import { CLAIMED } from '../../../src/db/command-plans.ts';
import { claimCommand, claimedByRequest, claimNextCommands } from '../../../src/db/command.repo.ts';
import { allocateExecutionIds, childReads, getExecution, loadEventsAfter } from '../../../src/db/execution.repo.ts';
import { admitQueued, extendDebounce } from '../../../src/db/flow.repo.ts';
import { MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { startPrelude } from '../../../src/db/start-prelude.ts';
import { readUnit } from '../../../src/db/unit-read.ts';
import { writeUnit, type UnitWrite } from '../../../src/db/unit-write.ts';
import { dueWaits } from '../../../src/db/wait.repo.ts';

// The hot path's statements and the tables they touch, held against the Citus plan of
// docs/scaling.md ("Beyond one PostgreSQL"): distributed by execution_id, a statement is
// single-shard when every table it touches is co-located and reached by an execution_id
// (`execution_id`) or is a reference table it only reads (`reference`). What is not is declared
// `global: <why>`. The SQL is what the db modules send (a recording Queryable), so a statement
// that starts touching another table, or reaches a co-located one by another key, fails here
// until this file and the doc say what it means for the plan.

/** Where each table goes under Citus (docs/scaling.md, "Where each table goes"). */
const PLACEMENT: Record<string, 'distributed' | 'reference' | 'coordinator' | `own key: ${string}` | 'sequence' | 'bus'> = {
  // Distributed by execution_id, one co-location group.
  execution: 'distributed',
  event: 'distributed',
  command: 'distributed',
  wait: 'distributed',
  admission: 'distributed',
  batch_request: 'distributed',
  transient: 'distributed',
  // Small, read on every node, written rarely: replicated to every node.
  catalog: 'reference',
  flow_limit: 'reference',
  runtime: 'reference',
  credential: 'reference',
  resource: 'reference',
  trigger: 'reference',
  api_token: 'reference',
  // Distributed by a key of their own (not co-located with executions).
  flow_key: 'own key: key',
  idempotency_key: 'own key: key',
  // Left on the coordinator (Citus local tables).
  keychain: 'coordinator',
  execution_secret: 'coordinator',
  trigger_fire: 'coordinator',
  gateway_session: 'coordinator',
  gateway_login: 'coordinator',
  // Not tables: sequences (the coordinator's; Citus gives each node its own range of a bigint one) and the bus.
  execution_id_seq: 'sequence',
  NOTIFY: 'bus',
};

type Key = 'execution_id' | 'reference' | `global: ${string}`;
type HotStatement = { name: string; sql: () => Promise<string>; tables: Record<string, Key> };

/** Triggers, and what they touch beyond their table (their functions are in the migrations). */
/** Triggers on the hot tables: the tables each writes (`touches`) and only reads (`reads`). */
const TRIGGERS: Record<string, { table: string; touches: string[]; reads?: string[] }> = {
  // migrations/0021_flow_control.sql: a limited command that stops being held gives its slot back
  // (and, unless the connection says svc.notify = off, wakes claimers: migrations/0024).
  command_flow_release: { table: 'command', touches: ['flow_key', 'NOTIFY'] },
  command_flow_release_deleted: { table: 'command', touches: ['flow_key', 'NOTIFY'] },
  // migrations/0025_flow_key_triggers.sql: a limited command's or an admission's key row is made,
  // and an admitted execution's slot given back when its admission goes.
  command_flow_key: { table: 'command', touches: ['flow_key'] },
  admission_flow_key: { table: 'admission', touches: ['flow_key'] },
  admission_flow_release: { table: 'admission', touches: ['flow_key'] },
  // migrations/0028_admit_at_start.sql: an admission written admitted (its start had room) takes
  // its key's slot, reading the limit, or fails the write.
  admission_admit_at_start: { table: 'admission', touches: ['flow_key'], reads: ['flow_limit'] },
};

/**
 * Functions of the schema a statement calls that read a table (their bodies are in the
 * migrations), with the table they read, reached by the argument named first: `<alias>.execution_id`.
 */
const FUNCTIONS: Record<string, { reads: string }> = {
  // migrations/0027_batch_reserved_ids.sql: whether the log holds an event (the batch claim and end).
  svc_event_written: { reads: 'event' },
};

const FLOW_KEY = 'global: a limit key is shared by every execution that waits on it';
const NOTIFY = 'global: the PostgreSQL bus (the NATS bus sends none)';
const BY_COMMAND_ID = 'global: reached by command_id alone';
const CLAIM_PICK = 'global: the claim picks across executions by priority, then age';

const policy = { staleSeconds: 30, hardTimeoutSeconds: null };
const noUnit: UnitWrite = {
  newExecutions: [], appends: [], events: [], commands: [], commandUpdates: [], cancels: [], keychainCleanup: [], claimOlder: [], claimPolicy: policy,
  headChecks: [], idempotencyKeys: [], waits: [], waitEnds: [], admissions: [], admissionEnds: [], claimLimited: false,
};

/** A unit the step write cannot carry (it starts an execution): the full text is sent. */
const startUnit: UnitWrite = { ...noUnit, newExecutions: [{ execution_id: 1, catalog_id: 1, path: 'p', parent_execution_id: null, root_execution_id: 1, parent_command_id: null, status: 'running', progress: 0, result: null, error: null, snapshot: null, machine_version: 1, snapshot_event_id: null, last_event_id: 1 }] };

/** What the step write touches: the log, the commands it issues, moves and claims ahead (with stranded ones announced, their holders in runtime too). */
const STEP_WRITE_TABLES: Record<string, Key> = {
  execution: 'execution_id',
  event: 'execution_id',
  // Command moves reach their rows by execution_id (with command_id): only claim-ahead's pick is not.
  command: `${CLAIM_PICK} (claim-ahead)`,
  flow_key: FLOW_KEY,
  NOTIFY,
};

/** What the start write touches (no pick, nothing ended): commands are reached by execution_id. */
const START_WRITE_TABLES: Record<string, Key> = {
  execution: 'execution_id',
  // By the trigger of an admission written admitted (migrations/0028).
  flow_limit: 'reference',
  event: 'execution_id',
  command: 'execution_id',
  wait: 'execution_id',
  admission: 'execution_id',
  flow_key: FLOW_KEY,
  idempotency_key: 'global: a start key is unique across executions',
  catalog: 'reference',
  NOTIFY,
};

/** What the unit write touches without claim-ahead's pick: the start write's, and the keychain it cleans; command moves and cancels reach their rows by execution_id. */
const UNIT_WRITE_NO_PICK_TABLES: Record<string, Key> = { ...START_WRITE_TABLES, keychain: 'global: on the coordinator (entries of scope global belong to no execution)' };

/** What the unit write touches with the pick (both its texts): the pick is global, and its stranded part reads runtime. */
const UNIT_WRITE_TABLES: Record<string, Key> = { ...UNIT_WRITE_NO_PICK_TABLES, command: `${CLAIM_PICK} (claim-ahead)`, runtime: 'reference' };

/** A reporting worker that wants one more command than the unit hands it: claim-ahead's pick runs. */
const wantsOlder = [{ workerId: 'w', max: 1, token: null }];

const HOT: HotStatement[] = [
  { name: 'unit write (src/db/unit-write.ts)', sql: () => sent((q) => writeUnit(q, { ...startUnit, claimOlder: wantsOlder })), tables: UNIT_WRITE_TABLES },
  // A cancel, a wake-up, an execution's end: nobody wants an older command, so the text has no
  // pick (nor its stranded one, which reads runtime) and every command it touches is its executions'.
  {
    name: 'unit write without claim-ahead\'s pick (src/db/unit-write.ts)',
    sql: () => sent((q) => writeUnit(q, { ...startUnit, cancels: [{ execution_id: 1, seq: 1 }] })),
    tables: UNIT_WRITE_NO_PICK_TABLES,
  },
  // A start: it ends nothing (no cancel, no keychain cleanup, no wait or admission ended), so the
  // keychain is not touched.
  {
    name: 'start write (src/db/unit-write.ts)',
    sql: () => sent((q) => writeUnit(q, startUnit)),
    tables: START_WRITE_TABLES,
  },
  // A report that moves steps along and nothing else: the same parts less those it never has.
  { name: 'step write (src/db/unit-write.ts)', sql: () => sent((q) => writeUnit(q, { ...noUnit, claimOlder: wantsOlder, claimPolicy: null })), tables: STEP_WRITE_TABLES },
  // The same while stranded commands were announced: claim-ahead also takes those the policy lets go.
  {
    name: 'step write with stranded commands announced (src/db/unit-write.ts)',
    sql: () => sent((q) => writeUnit(q, { ...noUnit, claimOlder: wantsOlder })),
    tables: { ...STEP_WRITE_TABLES, runtime: 'reference' },
  },
  // A sequential step: its next command comes with the unit, claimed, and nobody wants an older
  // one, so the text has no pick and every command it touches is its execution's.
  { name: 'step write without claim-ahead\'s pick (src/db/unit-write.ts)', sql: () => sent((q) => writeUnit(q, noUnit)), tables: { ...STEP_WRITE_TABLES, command: 'execution_id' } },
  {
    // The same, sent by a unit that frees a limit's slot: claim-ahead's pick counts keys' room too.
    name: 'unit write freeing a limit\'s slot (src/db/unit-write.ts)',
    sql: () => sent((q) => writeUnit(q, { ...noUnit, claimOlder: wantsOlder, claimLimited: true })),
    tables: UNIT_WRITE_TABLES,
  },
  { name: 'claim by id (src/db/command.repo.ts)', sql: () => sent((q) => claimCommand(q, 1, 'w', policy)), tables: { command: BY_COMMAND_ID, runtime: 'reference' } },
  { name: 'claim by id with its execution (src/db/command.repo.ts)', sql: () => sent((q) => claimCommand(q, 1, 'w', policy, 7)), tables: { command: 'execution_id', runtime: 'reference' } },
  {
    name: 'claim next (src/db/command.repo.ts)',
    sql: () => sent((q) => claimNextCommands(q, 'w', 1, null)),
    tables: { command: CLAIM_PICK, flow_key: FLOW_KEY, flow_limit: 'reference' },
  },
  {
    name: 'claim next or stranded (src/db/command.repo.ts)',
    sql: () => sent((q) => claimNextCommands(q, 'w', 1, policy)),
    tables: { command: CLAIM_PICK, flow_key: FLOW_KEY, flow_limit: 'reference', runtime: 'reference' },
  },
  { name: 'claim sent again (src/db/command.repo.ts)', sql: () => sent((q) => claimedByRequest(q, 'w', 't')), tables: { command: 'global: by worker and request token' } },
  {
    name: 'hydrate read (src/db/unit-read.ts)',
    // Commands by (execution_id, command_id) pairs: a report's event names both.
    sql: () => sent((q) => readUnit(q, [1], [{ execution_id: 1, command_id: 1 }], new Map(), 1)),
    tables: { execution: 'execution_id', event: 'execution_id', batch_request: 'execution_id', command: 'execution_id' },
  },
  { name: 'execution row (src/db/execution.repo.ts)', sql: () => sent((q) => getExecution(q, 1)), tables: { execution: 'execution_id' } },
  { name: 'events after (src/db/execution.repo.ts)', sql: () => sent((q) => loadEventsAfter(q, 1, 0)), tables: { event: 'execution_id', batch_request: 'execution_id' } },
  {
    name: 'child reads (src/db/execution.repo.ts)',
    sql: () => sent((q) => childReads(q, ['p'], [1])),
    tables: { catalog: 'reference', execution: 'global: running children by parent_execution_id' },
  },
  { name: 'new execution ids (src/db/execution.repo.ts)', sql: () => sent((q) => allocateExecutionIds(q, 1)), tables: { execution_id_seq: 'global: the sequence' } },
  {
    name: 'start prelude (src/db/start-prelude.ts)',
    sql: () => sent((q) => startPrelude(q, ['p'], 1), [{ heads: null, ids: null }]),
    tables: { catalog: 'reference', execution_id_seq: 'global: the sequence' },
  },
  {
    name: 'batch accept (src/db/batch-accept.repo.ts)',
    sql: () => sent((q) => acceptBatches(q, [], 10)),
    tables: {
      execution: 'execution_id',
      event: 'execution_id',
      batch_request: 'global: duplicates by idempotency key, and the queue depth counts every execution',
    },
  },
  {
    name: 'batch claim, next heads (src/db/batch.repo.ts)',
    sql: () => sent((q) => claimBatches(q, { next: 1, leaseSeconds: 30 }, 10)),
    tables: { batch_request: 'global: the pick takes heads across executions, oldest first', event: 'execution_id' },
  },
  {
    name: 'batch claim, named executions (src/db/batch.repo.ts)',
    sql: () => sent((q) => claimBatches(q, { executions: [1] }, 10)),
    // The executions are named, and the UPDATE joins the picked rows on (execution_id, batch_id).
    tables: { batch_request: 'execution_id', event: 'execution_id' },
  },
  {
    name: 'batch commands named (src/db/batch.repo.ts)',
    sql: () => sent((q) => noteIssued(q, [{ execution_id: 1, seq: 1, batch_id: 1 }])),
    tables: { command: 'execution_id' },
  },
  {
    name: 'batch item records (src/db/batch.repo.ts)',
    sql: () => sent((q) => itemRecords(q, [{ batch_id: 1, execution_id: 1, event_ids: [2] }])),
    tables: { event: 'execution_id', command: 'execution_id' },
  },
  {
    name: 'batch end (src/db/batch.repo.ts)',
    sql: () => sent((q) => endBatches(q, 'complete', [batchEnd])),
    // The batches' executions are known from their claim.
    tables: { execution: 'execution_id', event: 'execution_id', batch_request: 'execution_id' },
  },
  {
    name: 'admitter (src/db/flow.repo.ts)',
    sql: () => sent((q) => admitQueued(q, 1, 1000)),
    tables: { admission: 'global: admits across executions, per key by priority', flow_key: FLOW_KEY, flow_limit: 'reference', execution: 'execution_id' },
  },
  {
    name: 'debounce extension (src/db/flow.repo.ts)',
    sql: () => sent((q) => extendDebounce(q, 'p', 'k', {}, 1)),
    tables: { admission: 'global: the open window of a playbook and key' },
  },
  {
    name: 'due waits (src/db/wait.repo.ts)',
    sql: () => sent((q) => dueWaits(q, 1)),
    tables: { wait: 'global: due by wake_at across executions', execution: 'execution_id' },
  },
];

const batchEnd = {
  batch_id: 1, execution_id: 1, worker_id: null, state: 'completed', event_type: 'batch.completed', context: {}, result: { context: {} }, error: null, commands_generated: 0, message: '',
} as const;

/** The one statement `run` sends, by a Queryable that records it and answers `rows`. */
async function sent(run: (q: Queryable) => Promise<unknown>, rows: object[] = []): Promise<string> {
  const texts: string[] = [];
  const query = async (config: string | pg.QueryConfig) => {
    texts.push(typeof config === 'string' ? config : config.text);
    return { rows, rowCount: rows.length };
  };
  await run({ query } as unknown as Queryable);
  if (texts.length !== 1) throw new Error(`expected one statement, ${texts.length} sent`);
  return texts[0];
}

// --- What a statement touches, by simple rules on its text --------------------------------------

/** One reference to a table (or a sequence, or the bus) in a statement. */
type Access = { table: string; write: boolean; keyed: boolean; text: string };

const TABLE = /\bcore\.(\w+)\b/gi;
const NOT_ALIAS = new Set(['where', 'set', 'on', 'join', 'left', 'right', 'inner', 'cross', 'using', 'order', 'group', 'limit', 'returning', 'for', 'union', 'and', 'or', 'select', 'as']);

/** `--` comments dropped, string literals blanked (same length), so only SQL is matched. */
function scrub(sql: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (quoted) {
      if (ch === "'" && sql[i + 1] === "'") (out += '  '), i++;
      else if (ch === "'") (quoted = false), (out += ch);
      else out += ch === '\n' ? ch : ' ';
    } else if (ch === "'") (quoted = true), (out += ch);
    else if (ch === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') (out += ' '), i++;
      out += '\n';
    } else out += ch;
  }
  return out;
}

/**
 * The innermost parenthesised group around `at` (the whole text at the top level): where it
 * starts, and its text with its nested groups blanked (same offsets).
 */
function levelOf(text: string, at: number): { start: number; text: string } {
  let start = 0;
  for (let i = at, depth = 0; i >= 0; i--) {
    if (text[i] === ')') depth++;
    else if (text[i] === '(' && depth-- === 0) {
      start = i + 1;
      break;
    }
  }
  let out = '';
  for (let i = start, depth = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    if (ch === ')' && depth-- === 0) break;
    out += depth > 0 && ch !== '(' && ch !== ')' ? ' ' : ch;
  }
  return { start, text: out };
}

/** References to tables in `text` (functions of the schema, `core.f(...)`, are none): where, the verb before and the alias. */
type TableRef = { table: string; index: number; end: number; verb: string; alias: string | null };

function tableRefs(text: string): TableRef[] {
  const refs: TableRef[] = [];
  for (const m of text.matchAll(TABLE)) {
    const end = m.index + m[0].length;
    const before = text.slice(0, m.index).trimEnd();
    const verb = /(DELETE\s+FROM|INSERT\s+INTO|UPDATE|FROM|JOIN|USING|,)$/i.exec(before)?.[1].toUpperCase().replace(/\s+/g, ' ');
    if (verb !== 'INSERT INTO' && /^\s*\(/.test(text.slice(end))) continue;
    if (!verb) throw new Error(`core.${m[1]} at "${text.slice(m.index - 40, end + 40)}": not after FROM, JOIN, UPDATE, INSERT INTO, DELETE FROM or USING`);
    refs.push({ table: m[1], index: m.index, end, verb, alias: aliasAfter(text, end) });
  }
  return refs;
}

/**
 * Aliases (or bare table names) of the tables a level reaches by execution_id: `a.execution_id`
 * compared by `=`, `= ANY(...)` or `IN (...)` to anything but another table of the level; two
 * tables of the level equated on it key the one joined later (the earlier drives the join).
 */
function keyedAt(level: string): Set<string> {
  const refs = tableRefs(level).map((r) => r.alias ?? r.table);
  const keyed = new Set<string>();
  let rest = level.replace(/\b(\w+)\.execution_id\s*=\s*(\w+)\.execution_id\b/g, (all, a: string, b: string) => {
    const [ia, ib] = [refs.lastIndexOf(a), refs.lastIndexOf(b)];
    if (ia >= 0 || ib >= 0) keyed.add(ia > ib ? a : b);
    return ' '.repeat(all.length);
  });
  // A bare `execution_id` is the column of the level's one table (or of its unaliased one).
  rest = rest.replace(/(?<![.\w])execution_id\s*(?:=|\bIN\b)/gi, (all) => (keyed.add(refs.length === 1 ? refs[0] : ''), keyed.add(''), all));
  for (const m of rest.matchAll(/\b(\w+)\.execution_id\s*(?:=|\bIN\b)|(?<![<>!])=\s*(\w+)\.execution_id\b/gi)) keyed.add(m[1] ?? m[2]);
  return keyed;
}

function aliasAfter(text: string, at: number): string | null {
  const m = /^\s+(?:AS\s+)?([a-z_]\w*)/i.exec(text.slice(at));
  return m && !NOT_ALIAS.has(m[1].toLowerCase()) ? m[1] : null;
}

/** Every table a statement touches, how (written or read) and whether each reference is keyed by execution_id. */
function accessesOf(sql: string): Access[] {
  const text = scrub(sql);
  const accesses: Access[] = [];
  for (const { table, index, end, verb, alias } of tableRefs(text)) {
    let keyed: boolean;
    if (verb === 'INSERT INTO') {
      const columns = /^\s*(?:AS\s+\w+\s*)?\(([^)]*)\)/i.exec(text.slice(end));
      keyed = !!columns && /\bexecution_id\b/.test(columns[1]);
    } else keyed = keyedAt(levelOf(text, index).text).has(alias ?? '');
    accesses.push({ table, write: /^(DELETE FROM|INSERT INTO|UPDATE)$/.test(verb), keyed, text: text.slice(index, end + 30).replace(/\s+/g, ' ') });
    // A trigger of the table fires: its own touches follow (the release fires when a held command
    // stops being held: never by an UPDATE that only claims).
    if (table === 'command' && (verb === 'DELETE FROM' || (verb === 'UPDATE' && releases(sql, levelOf(text, index))))) {
      for (const t of TRIGGERS.command_flow_release.touches) accesses.push({ table: t, write: true, keyed: false, text: `trigger on core.command: ${t}` });
    }
    const made =
      table === 'command' && verb === 'INSERT INTO'
        ? [TRIGGERS.command_flow_key]
        : table === 'admission' && verb === 'INSERT INTO'
          ? [TRIGGERS.admission_flow_key, TRIGGERS.admission_admit_at_start]
          : table === 'admission' && verb === 'DELETE FROM'
            ? [TRIGGERS.admission_flow_release]
            : [];
    for (const t of made.flatMap((m) => m.touches)) accesses.push({ table: t, write: true, keyed: false, text: `trigger on core.${table}: ${t}` });
    for (const t of made.flatMap((m) => m.reads ?? [])) accesses.push({ table: t, write: false, keyed: false, text: `trigger on core.${table}: reads ${t}` });
  }
  for (const m of text.matchAll(/\bcore\.(\w+)\(\s*([^,)]*)/g)) {
    const fn = FUNCTIONS[m[1]];
    if (fn) accesses.push({ table: fn.reads, write: false, keyed: /^\w+\.execution_id$/.test(m[2].trim()), text: `core.${m[1]}(${m[2]}, ...)` });
  }
  for (const m of sql.matchAll(/\bnextval\('core\.(\w+)'\)/g)) accesses.push({ table: m[1], write: true, keyed: false, text: m[0] });
  if (/\bpg_notify\s*\(/.test(text)) accesses.push({ table: 'NOTIFY', write: true, keyed: false, text: 'pg_notify' });
  return accesses;
}

/** An UPDATE of core.command (its level in `sql`) whose SET may move a held command to a status not held: any but a claim's. */
function releases(sql: string, level: { start: number; text: string }): boolean {
  const set = /\bSET\s+status\s*=\s*/i.exec(level.text);
  if (!set) return false;
  const value = /^('[^']*'|[^,\s]+)/.exec(sql.slice(level.start + set.index + set[0].length))?.[1];
  return value !== CLAIMED;
}

// --- The checks ---------------------------------------------------------------------------------

describe('hot statements under Citus (docs/scaling.md): the tables each touches and by what key', () => {
  it.each(HOT.map((s) => [s.name, s] as const))('%s', async (_, s) => {
    const accesses = accessesOf(await s.sql());
    const touched = [...new Set(accesses.map((a) => a.table))].sort();
    // Every table it touches is declared (with the key it is reached by), and only those.
    expect(touched, 'tables touched (declare a new one, and what it means for the plan)').toEqual(Object.keys(s.tables).sort());
    for (const [table, key] of Object.entries(s.tables)) {
      const mine = accesses.filter((a) => a.table === table);
      if (key === 'execution_id') {
        // Every reference to it reaches its rows by execution_id, and it is distributed by it.
        expect(PLACEMENT[table], `${table}: keyed by execution_id, so distributed by it`).toBe('distributed');
        expect(mine.filter((a) => !a.keyed).map((a) => a.text), `${table}: references not reached by execution_id`).toEqual([]);
      } else if (key === 'reference') {
        // A reference table is read where the statement runs; a write of it goes to every node.
        expect(PLACEMENT[table], `${table}: declared a reference table`).toBe('reference');
        expect(mine.filter((a) => a.write).map((a) => a.text), `${table}: a reference table written on the hot path`).toEqual([]);
      } else {
        expect(PLACEMENT[table], `${table}: has a place in the plan`).toBeDefined();
        // A distributed table declared global is reached by another key somewhere: once it no longer is, say so.
        if (PLACEMENT[table] === 'distributed') expect(mine.some((a) => !a.keyed), `${table}: every reference is keyed by execution_id now: declare it 'execution_id'`).toBe(true);
      }
    }
  });

  // PostgreSQL 18.4: a statement that locks or updates rows may recheck one another transaction
  // changed (EvalPlanQual), which initialises the statement's subplans again, run-time partition
  // pruning of a core.event scan included, in memory freed when the recheck ends while the
  // statement still prunes with it (a backend killed by signal 11, under batch load). Such a
  // statement writes the log (INSERT routes rows, it does not prune) but reads it only through a
  // function of the schema, whose query runs in an executor of its own (FUNCTIONS).
  it.each(HOT.map((s) => [s.name, s] as const))('%s: reads the partitioned log only through a function if it locks or updates rows', async (_, s) => {
    const text = scrub(await s.sql());
    if (!/\bFOR\s+(?:NO\s+KEY\s+)?UPDATE\b|\bFOR\s+(?:KEY\s+)?SHARE\b|\bUPDATE\s+core\.|\bDELETE\s+FROM\s+core\./i.test(text)) return;
    expect(tableRefs(text).filter((r) => r.table === 'event' && r.verb !== 'INSERT INTO').map((r) => text.slice(r.index, r.end + 40).replace(/\s+/g, ' '))).toEqual([]);
  });

  it('every table the migrations make has a place in the plan', () => {
    const sql = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort().map((f) => readFileSync(`${MIGRATIONS_DIR}${f}`, 'utf8')).join('\n');
    const made = new Set([...sql.matchAll(/CREATE TABLE core\.(\w+) (?!PARTITION OF)/g)].map((m) => m[1]));
    for (const m of sql.matchAll(/DROP TABLE core\.(\w+)/g)) made.delete(m[1]);
    const dropped = new Set([...sql.matchAll(/DROP SEQUENCE (?:IF EXISTS )?core\.(\w+)/g)].map((m) => m[1]));
    const sequences = [...sql.matchAll(/CREATE SEQUENCE core\.(\w+)/g)].map((m) => m[1]).filter((q) => !dropped.has(q));
    expect([...made, ...sequences].filter((t) => PLACEMENT[t] === undefined)).toEqual([]);
    // The triggers are those declared above, whose touches the statements' checks add.
    // A trigger made again (a migration changing its condition) counts once, where it was first made.
    const triggers = new Map<string, string>();
    for (const m of sql.matchAll(/CREATE TRIGGER (\w+)\s+(?:AFTER|BEFORE|INSTEAD OF)[\s\S]*?\bON core\.(\w+)/g)) if (!triggers.has(m[1])) triggers.set(m[1], m[2]);
    expect([...triggers]).toEqual(Object.entries(TRIGGERS).map(([name, t]) => [name, t.table]));
  });

  it('the rules see what they should: keys, joins, nested groups, inserts', () => {
    const keyed = (sql: string) => Object.fromEntries(accessesOf(sql).map((a) => [a.table, a.keyed]));
    expect(keyed('SELECT 1 FROM core.event v WHERE v.execution_id = $1')).toEqual({ event: true });
    expect(keyed('SELECT 1 FROM core.execution WHERE execution_id = ANY($1::bigint[])')).toEqual({ execution: true });
    expect(keyed('SELECT 1 FROM core.execution e WHERE execution_id IN (SELECT id FROM x)')).toEqual({ execution: true });
    expect(keyed('SELECT 1 FROM core.command c WHERE c.command_id = $1')).toEqual({ command: false });
    // The join's driver is not keyed by the join; the table joined to it is.
    expect(keyed('SELECT 1 FROM core.wait w JOIN core.execution e ON e.execution_id = w.execution_id WHERE w.wake_at <= now()')).toEqual({ wait: false, execution: true });
    // A condition inside a nested group keys only that group's tables.
    expect(keyed('SELECT 1 FROM core.command o WHERE NOT EXISTS (SELECT 1 FROM x WHERE x.execution_id = o.execution_id)')).toEqual({ command: false });
    expect(keyed('INSERT INTO core.event (execution_id, event_id) SELECT 1, 2')).toEqual({ event: true });
    expect(keyed('INSERT INTO core.flow_key AS k (name, key) VALUES ($1, $2)')).toEqual({ flow_key: false });
    // A range is no key: it spans shards.
    expect(keyed('SELECT 1 FROM core.execution e WHERE e.execution_id >= $1')).toEqual({ execution: false });
    // A function of the schema that reads a table touches it, keyed by its first argument.
    expect(keyed('SELECT core.svc_event_written(b.execution_id, b.event_ids[1]) FROM core.batch_request b WHERE b.batch_id = $1')).toEqual({ batch_request: false, event: true });
    // Comments and strings are not SQL.
    expect(accessesOf("SELECT 'core.catalog' -- FROM core.wait\n FROM core.event v WHERE v.execution_id = 1").map((a) => a.table)).toEqual(['event']);
  });
});
