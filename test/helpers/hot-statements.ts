import type pg from 'pg';
import { acceptBatches } from '../../src/db/batch-accept.repo.ts';
import { claimBatches, endBatches, itemRecords } from '../../src/db/batch.repo.ts';
import { claimCommand, claimedByRequest, claimNextCommands } from '../../src/db/command.repo.ts';
import { allocateExecutionIds, childReads, getExecution, loadEventsAfter } from '../../src/db/execution.repo.ts';
import { admitQueued, extendDebounce } from '../../src/db/flow.repo.ts';
import type { Queryable } from '../../src/db/queryable.ts';
import { startPrelude } from '../../src/db/start-prelude.ts';
import { readUnit } from '../../src/db/unit-read.ts';
import { writeUnit, type UnitWrite } from '../../src/db/unit-write.ts';
import { lookAtWaits } from '../../src/db/wait.repo.ts';

// The hot path's statements (docs/scaling.md, "The hot statements, one by one"), each sent by its
// module's own function to whatever Queryable is given: test/unit/db/hot-statements.test.ts reads
// their texts against the Citus plan; test/integration/citus/routing.test.ts has a Citus cluster
// plan them.

/** Where each table goes under Citus (docs/scaling.md, "Where each table goes"). */
export const PLACEMENT: Record<string, 'distributed' | 'reference' | 'coordinator' | `own key: ${string}` | 'sequence' | 'bus'> = {
  // Distributed by execution_id, one co-location group.
  execution: 'distributed',
  event: 'distributed',
  command: 'distributed',
  wait: 'distributed',
  admission: 'distributed',
  kept_admission: 'distributed',
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
  keychain_renewal: 'coordinator',
  execution_secret: 'coordinator',
  trigger_fire: 'coordinator',
  gateway_session: 'coordinator',
  gateway_login: 'coordinator',
  // Not tables: sequences (the coordinator's; Citus gives each node its own range of a bigint one) and the bus.
  execution_id_seq: 'sequence',
  NOTIFY: 'bus',
};

/** How a statement reaches a table: by an execution's id, as a reference table it only reads, or otherwise (why). */
export type Key = 'execution_id' | 'reference' | `global: ${string}`;
/** A hot statement: `send` makes its module send it (once) to `q`, answered with `rows`. */
export type HotStatement = { name: string; send: (q: Queryable) => Promise<unknown>; rows?: object[]; tables: Record<string, Key> };

export const FLOW_KEY = 'global: a limit key is shared by every execution that waits on it';
export const NOTIFY = 'global: the PostgreSQL bus (the NATS bus sends none)';
const BY_COMMAND_ID = 'global: reached by command_id alone';
const CLAIM_PICK = 'global: the claim picks across executions by priority, then age';

/** A claim policy as the config gives one. */
export const policy = { staleSeconds: 30, hardTimeoutSeconds: null };
/** A unit that writes nothing: the hot statements' units add to it. */
export const noUnit: UnitWrite = {
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
  // By the release trigger of a command that kept its slots after a cancel (migrations/0055).
  kept_admission: 'execution_id',
  // By the trigger of a queued execution's pause, which closes its debounce window (migrations/0058).
  admission: 'execution_id',
  NOTIFY,
};

/** What the start write touches (no pick, nothing ended, no idempotency key): commands are reached by execution_id. */
const START_WRITE_TABLES: Record<string, Key> = {
  execution: 'execution_id',
  // By the trigger of an admission written admitted (migrations/0028).
  flow_limit: 'reference',
  event: 'execution_id',
  command: 'execution_id',
  wait: 'execution_id',
  // Its rows by execution_id; the trigger of an admission written admitted also reads its key's
  // queue (migrations/0057), as flow_key, by the key.
  admission: 'global: an admission written admitted reads the queue of its key',
  flow_key: FLOW_KEY,
  // By the release trigger of an admission whose execution's cancelled commands still run (migrations/0055).
  kept_admission: 'execution_id',
  catalog: 'reference',
  NOTIFY,
};

/** What the unit write touches without claim-ahead's pick: the start write's, the keychain it cleans and the idempotency keys it stores; command moves and cancels reach their rows by execution_id. */
const UNIT_WRITE_NO_PICK_TABLES: Record<string, Key> = {
  ...START_WRITE_TABLES,
  keychain: 'global: on the coordinator (entries of scope global belong to no execution)',
  idempotency_key: 'global: a start key is unique across executions',
};

/** What the unit write touches with the pick (both its texts): the pick is global, and its stranded part reads runtime. */
const UNIT_WRITE_TABLES: Record<string, Key> = { ...UNIT_WRITE_NO_PICK_TABLES, command: `${CLAIM_PICK} (claim-ahead)`, runtime: 'reference' };

/** A reporting worker that wants one more command than the unit hands it: claim-ahead's pick runs. */
const wantsOlder = [{ workerId: 'w', max: 1, token: null }];

/** The hot statements, each as its module sends it, with what it touches and by what key. */
export const HOT_STATEMENTS: HotStatement[] = [
  { name: 'unit write (src/db/unit-write.ts)', send: (q) => writeUnit(q, { ...startUnit, claimOlder: wantsOlder }), tables: UNIT_WRITE_TABLES },
  // A cancel, a wake-up, an execution's end: nobody wants an older command, so the text has no
  // pick (nor its stranded one, which reads runtime) and every command it touches is its executions'.
  {
    name: 'unit write without claim-ahead\'s pick (src/db/unit-write.ts)',
    send: (q) => writeUnit(q, { ...startUnit, cancels: [{ execution_id: 1, seq: 1 }] }),
    tables: UNIT_WRITE_NO_PICK_TABLES,
  },
  // A start: it ends nothing (no cancel, no keychain cleanup, no wait or admission ended), so the
  // keychain is not touched.
  {
    name: 'start write (src/db/unit-write.ts)',
    send: (q) => writeUnit(q, startUnit),
    tables: START_WRITE_TABLES,
  },
  // A report that moves steps along and nothing else: the same parts less those it never has.
  { name: 'step write (src/db/unit-write.ts)', send: (q) => writeUnit(q, { ...noUnit, claimOlder: wantsOlder, claimPolicy: null }), tables: STEP_WRITE_TABLES },
  // The same while stranded commands were announced: claim-ahead also takes those the policy lets go.
  {
    name: 'step write with stranded commands announced (src/db/unit-write.ts)',
    send: (q) => writeUnit(q, { ...noUnit, claimOlder: wantsOlder }),
    tables: { ...STEP_WRITE_TABLES, runtime: 'reference' },
  },
  // A sequential step: its next command comes with the unit, claimed, and nobody wants an older
  // one, so the text has no pick and every command it touches is its execution's.
  { name: 'step write without claim-ahead\'s pick (src/db/unit-write.ts)', send: (q) => writeUnit(q, noUnit), tables: { ...STEP_WRITE_TABLES, command: 'execution_id' } },
  {
    // The same, sent by a unit that frees a limit's slot: claim-ahead's pick counts keys' room too.
    name: 'unit write freeing a limit\'s slot (src/db/unit-write.ts)',
    send: (q) => writeUnit(q, { ...noUnit, claimOlder: wantsOlder, claimLimited: true }),
    tables: UNIT_WRITE_TABLES,
  },
  { name: 'claim by id (src/db/command.repo.ts)', send: (q) => claimCommand(q, 1, 'w', policy), tables: { command: BY_COMMAND_ID, runtime: 'reference', execution: 'execution_id' } },
  { name: 'claim by id with its execution (src/db/command.repo.ts)', send: (q) => claimCommand(q, 1, 'w', policy, 7), tables: { command: 'execution_id', runtime: 'reference', execution: 'execution_id' } },
  {
    name: 'claim next (src/db/command.repo.ts)',
    send: (q) => claimNextCommands(q, 'w', 1, null),
    tables: { command: CLAIM_PICK, flow_key: FLOW_KEY, flow_limit: 'reference' },
  },
  {
    name: 'claim next or stranded (src/db/command.repo.ts)',
    send: (q) => claimNextCommands(q, 'w', 1, policy),
    tables: { command: CLAIM_PICK, flow_key: FLOW_KEY, flow_limit: 'reference', runtime: 'reference', execution: 'execution_id' },
  },
  { name: 'claim sent again (src/db/command.repo.ts)', send: (q) => claimedByRequest(q, 'w', 't'), tables: { command: 'global: by worker and request token' } },
  {
    name: 'hydrate read (src/db/unit-read.ts)',
    // Commands by (execution_id, command_id) pairs: a report's event names both.
    send: (q) => readUnit(q, [1], [{ execution_id: 1, command_id: 1 }], new Map(), 1),
    tables: { execution: 'execution_id', event: 'execution_id', batch_request: 'execution_id', command: 'execution_id' },
  },
  { name: 'execution row (src/db/execution.repo.ts)', send: (q) => getExecution(q, 1), tables: { execution: 'execution_id' } },
  { name: 'events after (src/db/execution.repo.ts)', send: (q) => loadEventsAfter(q, 1, 0), tables: { event: 'execution_id', batch_request: 'execution_id' } },
  {
    name: 'child reads (src/db/execution.repo.ts)',
    send: (q) => childReads(q, ['p'], [1]),
    tables: { catalog: 'reference', execution: 'global: running children by parent_execution_id' },
  },
  { name: 'new execution ids (src/db/execution.repo.ts)', send: (q) => allocateExecutionIds(q, 1), tables: { execution_id_seq: 'global: the sequence' } },
  {
    name: 'start prelude (src/db/start-prelude.ts)',
    send: (q) => startPrelude(q, ['p'], 1), rows: [{ heads: null, ids: null }],
    tables: { catalog: 'reference', execution_id_seq: 'global: the sequence' },
  },
  {
    name: 'batch accept (src/db/batch-accept.repo.ts)',
    send: (q) => acceptBatches(q, [], 10),
    tables: {
      execution: 'execution_id',
      event: 'execution_id',
      batch_request: 'global: duplicates by idempotency key, and the queue depth counts every execution',
    },
  },
  {
    name: 'batch claim, next heads (src/db/batch.repo.ts)',
    send: (q) => claimBatches(q, { next: 1, leaseSeconds: 30 }, 10),
    tables: { batch_request: 'global: the pick takes heads across executions, oldest first', event: 'execution_id' },
  },
  {
    name: 'batch claim, named executions (src/db/batch.repo.ts)',
    send: (q) => claimBatches(q, { executions: [1] }, 10),
    // The executions are named, and the UPDATE joins the picked rows on (execution_id, batch_id).
    tables: { batch_request: 'execution_id', event: 'execution_id' },
  },
  {
    name: 'batch item records (src/db/batch.repo.ts)',
    send: (q) => itemRecords(q, [{ batch_id: 1, execution_id: 1, event_ids: [2] }]),
    tables: { event: 'execution_id', command: 'execution_id' },
  },
  {
    name: 'batch end (src/db/batch.repo.ts)',
    send: (q) => endBatches(q, 'complete', [batchEnd]),
    // The batches' executions are known from their claim.
    tables: { execution: 'execution_id', event: 'execution_id', batch_request: 'execution_id' },
  },
  {
    name: 'admitter (src/db/flow.repo.ts)',
    send: (q) => admitQueued(q, 1, 1000),
    tables: { admission: 'global: admits across executions, per key by priority', flow_key: FLOW_KEY, flow_limit: 'reference', execution: 'execution_id' },
  },
  {
    name: 'debounce extension (src/db/flow.repo.ts)',
    send: (q) => extendDebounce(q, 'p', 'k', { args: {}, seconds: 1, limit: 'l', key: 'k', capacity: null, priority: 5 }),
    tables: { admission: 'global: the open window of a playbook and key', flow_key: FLOW_KEY, execution: 'execution_id' },
  },
  {
    name: 'due waits (src/db/wait.repo.ts)',
    send: (q) => lookAtWaits(q, 1),
    tables: { wait: 'global: due by wake_at across executions', execution: 'execution_id' },
  },
];

const batchEnd = {
  batch_id: 1, execution_id: 1, worker_id: null, state: 'completed', event_type: 'batch.completed', context: {}, result: { context: {} }, error: null, commands_generated: 0, message: '',
} as const;


/** The one statement `s` sends, as text and values, by a Queryable that records it and answers `s.rows`. */
export async function sent(s: HotStatement): Promise<{ text: string; values: unknown[] }> {
  const got: { text: string; values: unknown[] }[] = [];
  const rows = s.rows ?? [];
  const query = async (config: string | pg.QueryConfig, params?: unknown[]) => {
    got.push(typeof config === 'string' ? { text: config, values: params ?? [] } : { text: config.text, values: config.values ?? params ?? [] });
    return { rows, rowCount: rows.length };
  };
  await s.send({ query } as unknown as Queryable);
  if (got.length !== 1) throw new Error(`${s.name}: expected one statement, ${got.length} sent`);
  return got[0];
}
