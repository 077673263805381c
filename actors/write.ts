import { EXECUTION_MACHINE_VERSION } from '../machines/execution.machine.ts';
import { COMMAND_RULES } from '../machines/command-rules.ts';
import type { ClaimPolicy, CommandRow } from '../src/db/command.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { writeUnit, type Claimer, type UnitCommand, type UnitExecutionUpdate, type UnitNewExecution, type UnitWrite } from '../src/db/unit-write.ts';
import type { Folded } from './fold.ts';
import type { Published } from './publish.ts';

/** Events between two writes of an execution's stored snapshot (hydration refolds at most these). */
export const SNAPSHOT_EVERY_EVENTS = 64;

export type Written = {
  /** The commands the claimers now hold. */
  claimed: CommandRow[];
  /** Executions outside the unit that got an inbox event and are running: route them after commit. */
  wakes: number[];
  /** What this process may hold in memory once the write is committed. */
  published: Published[];
};

/**
 * The write step: everything a finished fold writes, its inbox events for the executions it did
 * not hold included, in one statement (src/db/unit-write.ts). With `claims`, new commands go
 * straight to those workers in order, up to each one's `max` (claim-ahead), and older pending
 * ones (and stranded ones `claimPolicy` lets go) fill what is left.
 */
export async function writeFolded(q: Queryable, folded: Folded, claims: readonly Claimer[] = [], claimPolicy: ClaimPolicy | null = null): Promise<Written> {
  const { write, published } = planWrite(folded, claims, claimPolicy);
  const { claimed, woken } = await writeUnit(q, write);
  return { claimed, wakes: woken, published };
}

/** The one statement's parts for a fold, and what its commit will let this process hold. */
export function planWrite(folded: Folded, claims: readonly Claimer[], claimPolicy: ClaimPolicy | null): { write: UnitWrite; published: Published[] } {
  const older: Claimer[] = [];
  const commands: UnitCommand[] = folded.rows.commands.slice();
  let next = 0;
  for (const claim of claims) {
    let handed = 0;
    for (; handed < claim.max && next < commands.length; next++) {
      const c = commands[next];
      if (!COMMAND_RULES.claim.from.includes(c.status)) continue;
      // The insert takes it for the claimer (attempt 1).
      commands[next] = { ...c, status: COMMAND_RULES.claim.to, worker_id: claim.workerId, claim_token: claim.token };
      handed++;
    }
    if (claim.max > handed) older.push({ ...claim, max: claim.max - handed });
  }
  const executions: UnitExecutionUpdate[] = [];
  const newExecutions: UnitNewExecution[] = [];
  const lateAdvances = [];
  const published: Published[] = [];
  for (const h of folded.held) {
    let snapshotEventId = h.snapshotEventId;
    if (h.dirty && !h.snapshot) lateAdvances.push({ execution_id: h.id, last_event_id: h.lastEventId }); // a late event for a finished execution
    else if (h.dirty && h.snapshot) {
      const ctx = h.snapshot.context;
      const total = h.compiled.playbook.workflow.length || 1;
      const running = h.status === 'running';
      // A finished execution, however it ended, has no work left: `status` says how it ended.
      const progress = running ? Math.min(99, Math.round((100 * ctx.completedSteps.length) / total)) : 100;
      // The log is the truth and the snapshot a cache of it: written every SNAPSHOT_EVERY_EVENTS
      // events, so a step does not rewrite the whole context; a finished execution drops it.
      const writeSnapshot = running && h.lastEventId - h.snapshotEventId >= SNAPSHOT_EVERY_EVENTS;
      const update = {
        execution_id: h.id,
        status: h.status,
        progress,
        result: ctx.finished?.result ?? null,
        error: ctx.finished?.error ?? null,
        snapshot: writeSnapshot ? { value: h.snapshot.value, context: ctx } : null,
        machine_version: EXECUTION_MACHINE_VERSION,
        snapshot_event_id: writeSnapshot ? h.lastEventId : running ? null : 0,
        applied_event_id: h.lastEventId,
        last_event_id: h.lastEventId,
      };
      if (writeSnapshot) snapshotEventId = h.lastEventId; // what the stored snapshot now holds
      if (h.isNew) {
        newExecutions.push({
          ...update,
          catalog_id: h.row.catalog_id,
          path: h.row.path,
          parent_execution_id: h.row.parent_execution_id,
          root_execution_id: h.row.root_execution_id,
          parent_command_id: h.parentCommandId,
        });
      } else executions.push({ ...update, expected_last_event_id: h.readLastEventId });
    }
    published.push(h.snapshot && h.status === 'running' ? { executionId: h.id, lastEventId: h.lastEventId, snapshot: h.snapshot, snapshotEventId } : { executionId: h.id, gone: true });
  }
  const write: UnitWrite = {
    // Without a transaction, the statement takes the locks itself: held executions that exist.
    locks: folded.singleStatement ? folded.held.filter((h) => !h.isNew).map((h) => h.id) : [],
    newExecutions,
    executions,
    lateAdvances,
    commands,
    events: folded.rows.events,
    commandUpdates: [...folded.commandUpdates.values()],
    cancels: folded.rows.cancels,
    keychainCleanup: folded.rows.keychainCleanup,
    claimOlder: older,
    claimPolicy,
    headChecks: [...folded.headChecks],
    idempotencyKeys: [...folded.idempotencyKeys],
    inbox: folded.rows.inbox.map(({ executionId, event }) => ({
      execution_id: executionId,
      event_type: event.event_type,
      context: event.context ?? null,
      result: event.result ?? null,
      error: event.error ?? null,
    })),
  };
  return { write, published };
}
