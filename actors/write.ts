import { EXECUTION_MACHINE_VERSION } from '../machines/execution.machine.ts';
import { COMMAND_RULES } from '../machines/command-rules.ts';
import { executionProgress } from '../machines/execution-progress.ts';
import { isLiveExecutionStatus } from '../machines/statuses.ts';
import type { ClaimPolicy, CommandRow } from '../src/db/command.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { writeUnit, type Claimer, type LogAppend, type LogEvent, type UnitCommand, type UnitNewExecution, type UnitWrite } from '../src/db/unit-write.ts';
import type { Folded } from './fold.ts';
import type { Published } from './publish.ts';
import type { UnitRows } from './unit-types.ts';

/** Events between two writes of an execution's stored snapshot (hydration refolds at most these). */
export const SNAPSHOT_EVERY_EVENTS = 64;

export type Written = {
  /** The commands the claimers now hold. */
  claimed: CommandRow[];
  /** Executions outside the unit that got an inbox event and are running: route them after commit. */
  wakes: number[];
  /** What this process may hold in memory once the write is committed. */
  published: Published[];
  /** Executions of the commands it issued PENDING (for no claimer): what a bus without NOTIFY announces. */
  pending: number[];
};

/**
 * The write step: everything a finished fold writes, its inbox events for the executions it did
 * not hold included, in one statement (src/db/unit-write.ts). With `claims`, new commands go
 * straight to those workers in order, up to each one's `max` (claim-ahead), and older pending
 * ones (and stranded ones `claimPolicy` lets go) fill what is left of those not `newOnly`; with `freesSlot` (the unit
 * frees a limit's slot) those include commands of limits' keys with room.
 */
export async function writeFolded(q: Queryable, folded: Folded, claims: readonly Claimer[] = [], claimPolicy: ClaimPolicy | null = null, freesSlot = false): Promise<Written> {
  const { write, published } = planWrite(folded, claims, claimPolicy, freesSlot);
  const { claimed, woken } = await writeUnit(q, write);
  const pending = write.commands.flatMap((c) => (COMMAND_RULES.claim.from.includes(c.status) ? [c.execution_id] : []));
  return { claimed, wakes: woken, published, pending };
}

/** The one statement's parts for a fold, and what its commit will let this process hold. */
export function planWrite(folded: Folded, claims: readonly Claimer[], claimPolicy: ClaimPolicy | null, freesSlot = false): { write: UnitWrite; published: Published[] } {
  const older: Claimer[] = [];
  const commands: UnitCommand[] = folded.rows.commands.slice();
  let next = 0;
  for (const claim of claims) {
    let handed = 0;
    for (; handed < claim.max && next < commands.length; next++) {
      const c = commands[next];
      // A limit's command is taken only by the claim's pick, which counts its key's room.
      if (!COMMAND_RULES.claim.from.includes(c.status) || c.limit_name !== null) continue;
      // The insert takes it for the claimer (attempt 1).
      commands[next] = { ...c, status: COMMAND_RULES.claim.to, worker_id: claim.workerId, claim_token: claim.token };
      handed++;
    }
    if (claim.max > handed && !claim.newOnly) older.push({ ...claim, max: claim.max - handed });
  }
  const waiting = new Set(folded.rows.waits.map((w) => w.execution_id));
  const appends: LogAppend[] = [];
  const newExecutions: UnitNewExecution[] = [];
  const published: Published[] = [];
  for (const h of folded.held) {
    let snapshotEventId = h.snapshotEventId;
    if (h.dirty && !h.snapshot) {
      // A late event for a finished execution: only its log moves on.
      appends.push({ ...NO_PROJECTION, execution_id: h.id, expected: h.readLastEventId, n: h.lastEventId - h.readLastEventId, applied: 'all' });
    } else if (h.dirty && h.snapshot) {
      const ctx = h.snapshot.context;
      const running = isLiveExecutionStatus(h.status);
      // Done steps over known steps: a run that failed halfway stays at the share it reached.
      const progress = executionProgress(h.status, ctx.completedSteps, h.compiled.playbook.workflow.length, ctx.finished?.error?.step);
      // The log is the truth and the snapshot a cache of it: written every SNAPSHOT_EVERY_EVENTS
      // events, so a step does not rewrite the whole context. An execution that begins to wait is
      // stored with its state too: it may sleep for long, and its wake-up (on any server) then
      // resumes the snapshot instead of refolding its log. A finished execution keeps the last one
      // stored while it ran: its state is read from there (a 48,000-event log refolded took 2 s).
      const writeSnapshot = running && (h.lastEventId - h.snapshotEventId >= SNAPSHOT_EVERY_EVENTS || waiting.has(h.id));
      const projection = {
        status: h.status,
        progress,
        result: ctx.finished?.result ?? null,
        error: ctx.finished?.error ?? null,
        snapshot: writeSnapshot ? { value: h.snapshot.value, context: ctx } : null,
        machine_version: EXECUTION_MACHINE_VERSION,
        snapshot_event_id: writeSnapshot ? h.lastEventId : null,
      };
      if (writeSnapshot) snapshotEventId = h.lastEventId; // what the stored snapshot now holds
      if (h.isNew) {
        newExecutions.push({
          ...projection,
          execution_id: h.id,
          catalog_id: h.row.catalog_id,
          path: h.row.path,
          parent_execution_id: h.row.parent_execution_id,
          root_execution_id: h.row.root_execution_id,
          parent_command_id: h.parentCommandId,
          last_event_id: h.lastEventId,
        });
      } else appends.push({ ...projection, execution_id: h.id, expected: h.readLastEventId, n: h.lastEventId - h.readLastEventId, applied: 'all', proj: true });
    }
    published.push(h.snapshot && isLiveExecutionStatus(h.status) ? { executionId: h.id, lastEventId: h.lastEventId, snapshot: h.snapshot, snapshotEventId } : { executionId: h.id, gone: true });
  }
  const readAt = new Map(folded.held.map((h) => [h.id, h.readLastEventId]));
  // A batch item goes at the id reserved for it (not counted in `n`); the others follow the log.
  const events: LogEvent[] = folded.rows.events.map(({ event_id, catalog_id: _catalog, issued_seq, reserved, ...e }) => ({
    ...e,
    ord: reserved ? 0 : event_id - (readAt.get(e.execution_id) ?? 0),
    issued_seq: issued_seq ?? null,
    event_id: reserved ? event_id : null,
  }));
  // Inbox events for executions outside the unit go after whatever their logs hold (unguarded).
  const inboxCount = new Map<number, number>();
  for (const { executionId, event } of folded.rows.inbox) {
    const ord = (inboxCount.get(executionId) ?? 0) + 1;
    inboxCount.set(executionId, ord);
    events.push({
      execution_id: executionId,
      ord,
      event_type: event.event_type,
      status: null,
      step: null,
      command_id: null,
      worker_id: null,
      context: event.context ?? null,
      result: event.result ?? null,
      error: event.error ?? null,
      issued_seq: null,
    });
  }
  for (const [executionId, n] of inboxCount) appends.push({ ...NO_PROJECTION, execution_id: executionId, expected: null, n, applied: 'keep' });
  const write: UnitWrite = {
    newExecutions,
    appends,
    events,
    commands,
    commandUpdates: [...folded.commandUpdates.values()],
    cancels: folded.rows.cancels,
    keychainCleanup: folded.rows.keychainCleanup,
    claimOlder: older,
    claimPolicy,
    claimLimited: freesSlot && older.length > 0,
    headChecks: [...folded.headChecks],
    idempotencyKeys: [...folded.idempotencyKeys],
    waits: folded.rows.waits,
    waitEnds: folded.rows.waitEnds,
    admissions: unendedAdmissions(folded.rows),
    admissionEnds: folded.rows.admissionEnds.map((a) => a.execution_id),
  };
  return { write, published };
}

/**
 * The admissions to store: not that of an execution the same unit ends (no step waited on a
 * worker). Stored, its row would stay, slot and all: the end's delete, a part of the same
 * statement, cannot see a row that statement inserts. Memory (publish) still takes and gives its slot.
 */
function unendedAdmissions(rows: Pick<UnitRows, 'admissions' | 'admissionEnds'>): UnitRows['admissions'] {
  if (!rows.admissionEnds.length) return rows.admissions;
  const ended = new Set(rows.admissionEnds.map((a) => a.execution_id));
  return rows.admissions.filter((a) => !ended.has(a.execution_id));
}

const NO_PROJECTION = { proj: false, status: null, progress: null, result: null, error: null, snapshot: null, machine_version: null, snapshot_event_id: null } as const;
