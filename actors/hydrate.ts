import type { SnapshotFrom, StateValue } from 'xstate';
import { EXECUTION_MACHINE_VERSION, type ExecutionInput, type ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionContext } from '../machines/execution/types.ts';
import { loadEventsAfter, type EventRow, type ExecutionRow } from '../src/db/execution.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { asObject } from '../src/objects.ts';
import type { HotSnapshots } from './hot-snapshots.ts';
import type { CompiledPlaybook, PlaybookCache } from './playbook-cache.ts';
import { pureInitialTransition, pureTransition } from './pure-transition.ts';
import { toMachineEvent } from './to-machine-event.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;
type LogEvent = Pick<EventRow, 'event_type' | 'context' | 'result' | 'error'>;

/**
 * A locked (or from-memory) execution with the state its applied events fold to, and the inbox
 * events past them that the fold must still apply with effects. `snapshot` is null for a finished
 * execution: late events take the fast path.
 */
export type Hydrated = {
  readonly row: ExecutionRow;
  readonly compiled: CompiledPlaybook;
  readonly snapshot: Snapshot | null;
  /** The last event the stored snapshot holds (0: none usable). */
  readonly snapshotEventId: number;
  readonly inbox: readonly EventRow[];
};

/**
 * The first step after routing: each execution from the hot snapshot when nothing happened since
 * this process committed it; else from the stored snapshot (or none, when missing or of another
 * machine version) refolded through the events already applied. All reads happen here, none in
 * the fold.
 */
export async function hydrate(q: Queryable, cache: PlaybookCache, snapshots: HotSnapshots | undefined, rows: readonly ExecutionRow[]): Promise<Hydrated[]> {
  const out: Hydrated[] = [];
  for (const row of rows) out.push(await hydrateOne(q, cache, snapshots, row));
  return out;
}

async function hydrateOne(q: Queryable, cache: PlaybookCache, snapshots: HotSnapshots | undefined, row: ExecutionRow): Promise<Hydrated> {
  const compiled = await cache.get(q, row.catalog_id);
  if (row.status !== 'running') return { row, compiled, snapshot: null, snapshotEventId: row.snapshot_event_id, inbox: [] };
  const hot = snapshots?.get(row.execution_id, row.last_event_id);
  if (hot) return { row, compiled, snapshot: hot, snapshotEventId: row.snapshot_event_id, inbox: [] };
  const machine = compiled.machine;
  const stored = row.snapshot && row.machine_version === EXECUTION_MACHINE_VERSION ? (row.snapshot as { value: StateValue; context: ExecutionContext }) : null;
  const snapshotEventId = stored ? row.snapshot_event_id : 0;
  const after = row.last_event_id > snapshotEventId ? await loadEventsAfter(q, row.execution_id, snapshotEventId) : [];
  // Events the machine already applied: their effects happened, so they are folded without them.
  const snapshot = foldEvents(machine, stored ? machine.resolveState(stored) : null, after.filter((e) => e.event_id <= row.applied_event_id));
  return { row, compiled, snapshot, snapshotEventId, inbox: after.filter((e) => e.event_id > row.applied_event_id) };
}

/** Folds events from the start (`execution.started` first); null when the log has no start yet. */
export function replay(machine: ExecutionMachine, events: LogEvent[]): Snapshot | null {
  return foldEvents(machine, null, events);
}

/** Folds events into a snapshot without performing effects; from null, the log's `execution.started` begins it. */
function foldEvents(machine: ExecutionMachine, from: Snapshot | null, events: LogEvent[]): Snapshot | null {
  let snap = from;
  for (const ev of events) {
    if (!snap) {
      if (ev.event_type !== 'execution.started') continue;
      snap = pureInitialTransition(machine, asObject(ev.context).input as ExecutionInput)[0];
      continue;
    }
    const mev = toMachineEvent(ev);
    if (mev) snap = pureTransition(machine, snap, mev)[0];
  }
  return snap;
}
