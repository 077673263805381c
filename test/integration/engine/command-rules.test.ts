import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transition } from 'xstate';
import type { EngineDeps } from '../../../actors/engine-deps.ts';
import { HotSnapshots } from '../../../actors/hot-snapshots.ts';
import { KeyRooms } from '../../../actors/key-rooms.ts';
import { ParkedClaims } from '../../../actors/parked-claims.ts';
import { PlaybookCache } from '../../../actors/playbook-cache.ts';
import { routeEvents } from '../../../actors/route-events.ts';
import { startExecutions } from '../../../actors/start-execution.ts';
import { COMMAND_STATUSES, commandMachine, type CommandEvent, type CommandStatus } from '../../../machines/command.machine.ts';
import { EVENT } from '../../../machines/event-types.ts';
import { loadConfig } from '../../../src/config.ts';
import { insertCatalogVersion } from '../../../src/db/catalog.repo.ts';
import { claimCommand, claimNextCommands, markStrandedClaims, withdrawPausedClaims, type ClaimPolicy, type CommandRow } from '../../../src/db/command.repo.ts';
import type { Db } from '../../../src/db/db.ts';
import { registerWorkerPool } from '../../../src/db/runtime.repo.ts';
import { writeUnit, type UnitWrite } from '../../../src/db/unit-write.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { cancelExecution } from '../../../src/engine/cancel-execution.ts';
import { pauseExecution, resumeExecution } from '../../../src/waits/pause-execution.ts';
import { createLogger } from '../../../src/log.ts';
import { createMetrics } from '../../../src/metrics.ts';
import type { RoutedEvent } from '../../../src/protocol.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';

// The command machine is the rule; the SQL carries it out. For every status a command can have
// and every operation the service performs on one, through the real database code: the status,
// attempt and holder it leaves equal what the machine's transition() gives for the event (or
// events, first enabled wins) the operation stands for, and a refusal is a refusal of both.

let t: TestDatabase & { db: Db };
let base: Omit<EngineDeps, 'snapshots'>;
const PATH = 'rules/one';
const YAML = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: ${PATH} }\nworkflow:\n  - step: s\n    tool: { name: t, kind: noop }\n`;
const ATTEMPT = 2; // the claim a case's command is at: a stale report names attempt 1
const LIVE = 'holder'; // a registered pool that beats: the claim policy keeps its claims
const GONE = 'gone'; // an unregistered claimer silent for an hour: the claim policy lets it go
const TAKER = 'taker';
const POLICY: ClaimPolicy = { staleSeconds: 60, hardTimeoutSeconds: null };

beforeAll(async () => {
  t = await createMigratedDatabase();
  const config = loadConfig({ SVC_DATABASE_URL: t.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  const log = createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() }));
  base = { db: t.db, cache: new PlaybookCache(), rooms: new KeyRooms(t.db), parked: new ParkedClaims(), metrics: createMetrics(), log, config };
  const parsed = parsePlaybook(YAML);
  if (!parsed.ok) throw new Error('playbook does not parse');
  await insertCatalogVersion(t.db, { path: PATH, kind: 'playbook', content: YAML, payload: parsed.playbook });
  await registerWorkerPool(t.db, { name: LIVE, capacity: 1, labels: {} });
});
afterAll(async () => {
  await t?.drop();
});

type Case = { executionId: number; commandId: number; deps: EngineDeps };
type Holder = typeof LIVE | typeof GONE;

/**
 * A command of its own execution in `status`, at ATTEMPT, held (unless PENDING) by `holder`; no
 * other command is claimable or held, so the claim-next paths can take only this one.
 */
async function commandIn(status: CommandStatus, holder: Holder): Promise<Case> {
  await t.db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE status IN ('PENDING', 'PAUSED', 'CLAIMED', 'RUNNING')`);
  const deps = { ...base, snapshots: new HotSnapshots() }; // nothing remembered: the rows decide
  const [started] = await startExecutions(deps, [{ path: PATH, payload: {} }]);
  if (!started || !('executionId' in started)) throw new Error('start failed');
  const ago = holder === GONE ? `now() - interval '1 hour'` : 'now()';
  const { rows } = await t.db.query<{ command_id: number }>(
    `UPDATE core.command SET status = $2, attempt = $3, worker_id = $4, claimed_at = ${ago}, heartbeat_at = ${ago}
      WHERE execution_id = $1 RETURNING command_id`,
    [started.executionId, status, ATTEMPT, status === 'PENDING' ? null : holder],
  );
  return { executionId: started.executionId, commandId: rows[0].command_id, deps };
}

type Outcome = { status: CommandStatus; attempt: number; workerId: string | null };

/** What the machine does on the first of `events` it has a transition for (nothing moves if none). */
function machineOutcome(status: CommandStatus, workerId: string | null, events: CommandEvent[]): Outcome {
  const snapshot = commandMachine.resolveState({ value: status, context: { attempt: ATTEMPT, workerId } });
  for (const event of events) {
    if (!snapshot.can(event)) continue;
    const [next] = transition(commandMachine, snapshot, event);
    return { status: next.value as CommandStatus, attempt: next.context.attempt, workerId: next.context.workerId };
  }
  return { status, attempt: ATTEMPT, workerId };
}

async function stored(commandId: number): Promise<Outcome> {
  const { rows } = await t.db.query<{ status: CommandStatus; attempt: number; worker_id: string | null }>(
    'SELECT status, attempt, worker_id FROM core.command WHERE command_id = $1',
    [commandId],
  );
  return { status: rows[0].status, attempt: rows[0].attempt, workerId: rows[0].worker_id };
}

function onlyClaimOlder(claimPolicy: ClaimPolicy | null): UnitWrite {
  return {
    newExecutions: [], appends: [], events: [], commands: [], commandUpdates: [], cancels: [],
    keychainCleanup: [], claimOlder: [{ workerId: TAKER, max: 1, token: 'tok' }], claimPolicy, headChecks: [], idempotencyKeys: [], waits: [], waitEnds: [], admissions: [], admissionEnds: [], claimLimited: false,
  };
}

async function report(c: Case, eventType: string, reporter: { attempt: number | null; worker_id: string }): Promise<undefined> {
  const event: RoutedEvent = { execution_id: c.executionId, command_id: c.commandId, event_type: eventType, ...reporter };
  if (eventType === 'command.completed') event.result = { tasks: { t: { status: 'ok', data: null } } };
  if (eventType === 'command.failed') event.error = { message: 'it broke' };
  await routeEvents(c.deps, [event]);
  return undefined;
}

type Operation = {
  name: string;
  holder: Holder;
  /** The machine events the operation stands for, in the order it tries them. */
  events: CommandEvent[];
  /** Set: the operation is two, one after the other, and so are these machine events (each tried, in turn). */
  then?: CommandEvent[];
  /** Performs it; a claim returns the commands it claimed. */
  run(c: Case): Promise<CommandRow[] | undefined>;
};

const claim: CommandEvent = { type: 'claim', workerId: TAKER };
// A claim path tries a claim, and a re-claim where the claim policy lets the holder go.
const claimOrReclaim: CommandEvent[] = [claim, { type: 'reclaim', workerId: TAKER }];
const holder = { attempt: ATTEMPT, workerId: LIVE };

const OPERATIONS: Operation[] = [
  { name: 'claim by long poll', holder: LIVE, events: [claim], run: () => claimNextCommands(t.db, TAKER, 1, null, 'tok') },
  { name: 'claim by long poll, stranded commands announced', holder: LIVE, events: [claim], run: () => claimNextCommands(t.db, TAKER, 1, POLICY, 'tok') },
  { name: 'claim by id', holder: LIVE, events: [claim], run: async (c) => [await claimCommand(t.db, c.commandId, TAKER, POLICY)].filter((x) => x !== undefined) },
  { name: 'claim-ahead', holder: LIVE, events: [claim], run: async () => (await writeUnit(t.db, onlyClaimOlder(null))).claimed },
  {
    name: 're-claim by long poll (the reaper marked it)',
    holder: GONE,
    events: claimOrReclaim,
    run: async () => {
      await markStrandedClaims(t.db, { staleSeconds: POLICY.staleSeconds, hardTimeoutSeconds: 3600, max: 10 });
      return claimNextCommands(t.db, TAKER, 1, POLICY, 'tok');
    },
  },
  { name: 're-claim by id (lease expired)', holder: GONE, events: claimOrReclaim, run: async (c) => [await claimCommand(t.db, c.commandId, TAKER, POLICY)].filter((x) => x !== undefined) },
  {
    name: 're-claim by claim-ahead (the reaper marked it)',
    holder: GONE,
    events: claimOrReclaim,
    run: async () => {
      await markStrandedClaims(t.db, { staleSeconds: POLICY.staleSeconds, hardTimeoutSeconds: 3600, max: 10 });
      return (await writeUnit(t.db, onlyClaimOlder(POLICY))).claimed;
    },
  },
  { name: 'report started', holder: LIVE, events: [{ type: 'start', ...holder }], run: (c) => report(c, 'command.started', { attempt: ATTEMPT, worker_id: LIVE }) },
  { name: 'report completed', holder: LIVE, events: [{ type: 'complete', ...holder }], run: (c) => report(c, 'command.completed', { attempt: ATTEMPT, worker_id: LIVE }) },
  { name: 'report failed', holder: LIVE, events: [{ type: 'fail', ...holder }], run: (c) => report(c, 'command.failed', { attempt: ATTEMPT, worker_id: LIVE }) },
  {
    name: 'report from a stale attempt',
    holder: LIVE,
    events: [{ type: 'complete', attempt: ATTEMPT - 1, workerId: LIVE }],
    run: (c) => report(c, 'command.completed', { attempt: ATTEMPT - 1, worker_id: LIVE }),
  },
  {
    name: 'report from another worker',
    holder: LIVE,
    events: [{ type: 'complete', attempt: null, workerId: 'intruder' }],
    run: (c) => report(c, 'command.completed', { attempt: null, worker_id: 'intruder' }),
  },
  { name: 'cancel (its execution is cancelled)', holder: LIVE, events: [{ type: 'cancel' }], run: async (c) => void (await cancelExecution(c.deps, c.executionId, { reason: 'test' })) },
  { name: 'pause (its execution is paused)', holder: LIVE, events: [{ type: 'pause' }], run: async (c) => void (await pauseExecution(c.deps, c.executionId, undefined)) },
  {
    // The reaper's sweep while its execution is paused: a held claim whose holder is gone is given back to the pause.
    name: 'withdraw (its execution is paused, the reaper finds its holder gone)',
    holder: GONE,
    events: [{ type: 'pause' }, { type: 'withdraw' }],
    run: async (c) => {
      await pauseExecution(c.deps, c.executionId, undefined);
      await withdrawPausedClaims(t.db, POLICY, 10);
      return undefined;
    },
  },
  {
    name: 'resume (its execution is paused, then resumed)',
    holder: LIVE,
    events: [{ type: 'pause' }],
    then: [{ type: 'resume' }],
    run: async (c) => {
      await pauseExecution(c.deps, c.executionId, undefined);
      await resumeExecution(c.deps, c.executionId, undefined);
    },
  },
];

describe('the command SQL carries out the command machine: every status × every operation', () => {
  const moved = new Map<string, CommandStatus[]>(); // per operation, the statuses it moved a command from
  for (const op of OPERATIONS) {
    for (const status of COMMAND_STATUSES) {
      it(`${op.name} on ${status}`, async () => {
        const c = await commandIn(status, op.holder);
        const before = await stored(c.commandId);
        const first = machineOutcome(status, before.workerId, op.events);
        const expected = op.then ? { ...machineOutcome(first.status, first.workerId, op.then), attempt: first.attempt } : first;
        const out = await op.run(c);
        const after = await stored(c.commandId);
        expect(after, `${op.name} on ${status}: the row against the machine`).toEqual(expected);
        if (after.status !== before.status || after.attempt !== before.attempt) moved.set(op.name, [...(moved.get(op.name) ?? []), status]);
        if (out) {
          // A claim hands out the command exactly when the machine moved it.
          expect(out.map((r) => r.command_id)).toEqual(expected.attempt !== ATTEMPT ? [c.commandId] : []);
        }
      });
    }
  }

  it('every operation moved a command from some status (no case passed by doing nothing)', () => {
    // Operations meant to move nothing (stale and foreign reports) aside, each moved some command.
    const moving = OPERATIONS.filter((op) => !op.name.startsWith('report from')).map((op) => op.name);
    expect(moving.filter((name) => !moved.get(name)?.length)).toEqual([]);
  });
});

describe('a report names its command by the execution it was reported for', () => {
  it('a command reported under another execution is not found there: refused, and it does not move', async () => {
    // The hydrate read takes commands by (execution_id, command_id) pairs (src/db/unit-read.ts).
    const c = await commandIn('RUNNING', LIVE);
    const [other] = await startExecutions(c.deps, [{ path: PATH, payload: {} }]);
    if (!other || !('executionId' in other)) throw new Error('start failed');
    const before = await stored(c.commandId);
    const event: RoutedEvent = { execution_id: other.executionId, command_id: c.commandId, event_type: EVENT.commandCompleted, attempt: ATTEMPT, worker_id: LIVE };
    event.result = { tasks: { t: { status: 'ok', data: null } } };
    const { results } = await routeEvents({ ...base, snapshots: new HotSnapshots() }, [event]);
    expect(results).toEqual([{ event_id: null, error: 'unknown_command', detail: `command ${c.commandId} does not belong to execution ${other.executionId}` }]);
    expect(await stored(c.commandId)).toEqual(before);
  });
});
