import type { SnapshotFrom } from 'xstate';
import { EVENT } from '../machines/event-types.ts';
import { isLiveExecutionStatus } from '../machines/statuses.ts';
import { EXECUTION_MACHINE_VERSION, type ExecutionInput, type ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionEvent } from '../machines/execution/types.ts';
import type { CommandRow } from '../src/db/command.repo.ts';
import type { EventRow, ExecutionRow } from '../src/db/execution.repo.ts';
import { readUnit, type CommandRef, type ReadExecution, type ReservedBatch } from '../src/db/unit-read.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { asObject } from '../src/objects.ts';
import type { RoutedEvent } from '../src/protocol.ts';
import { batchItemEvent } from './batch-item.ts';
import { withChildTaskTimers, withChildTaskTimersOf } from './child-task-timers.ts';
import type { HotSnapshots } from './hot-snapshots.ts';
import type { CompiledPlaybook, PlaybookCache } from './playbook-cache.ts';
import { pureInitialTransition, pureReplay } from './pure-transition.ts';
import { restoreStoredSnapshot } from './stored-snapshot.ts';
import { toMachineEvent } from './to-machine-event.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;
type LogEvent = Pick<EventRow, 'event_type' | 'context' | 'result' | 'error'>;

/** A batch item waiting at the id reserved for it when its batch was accepted: routed as a report, written at that id. */
export type ReservedItem = { readonly eventId: number; readonly batchId: number; readonly event: RoutedEvent };

/**
 * A locked (or from-memory) execution with the state its applied events fold to, and the inbox
 * events past them that the fold must still apply with effects: those in the log, and the batch
 * items at ids reserved for them (`reserved`; the fold routes them, in id order with the others).
 * `snapshot` is null for a finished execution: late events take the fast path.
 */
export type Hydrated = {
  readonly row: ExecutionRow;
  readonly compiled: CompiledPlaybook;
  readonly snapshot: Snapshot | null;
  /** The last event the stored snapshot holds (0: none usable). */
  readonly snapshotEventId: number;
  readonly inbox: readonly EventRow[];
  readonly reserved: readonly ReservedItem[];
};

/**
 * What a unit holds: its executions hydrated, the reported commands' rows, and what was read for
 * them. `remembered`: the commands whose rows came from memory, not from this read.
 */
export type HydratedUnit = { executions: Hydrated[]; commands: Map<number, CommandRow>; remembered: ReadonlySet<number>; missing: number[]; readNothing: boolean };

/**
 * The first step after routing, and every read of state: each execution from the hot snapshot
 * this process committed last unless `fresh` names it (it got inbox events, or a write found it
 * moved on); the reported commands from the rows this process committed, likewise; everything
 * else in ONE statement (src/db/unit-read.ts): the row, its stored snapshot refolded through the
 * events already applied, and the inbox events past them that the fold applies with effects.
 * The memory is a cache inside this step: the write's guard decides whether it was current.
 */
export async function hydrate(
  q: Queryable,
  cache: PlaybookCache,
  snapshots: HotSnapshots,
  executionIds: readonly number[],
  commandRefs: readonly CommandRef[],
  fresh: ReadonlySet<number> | 'all',
): Promise<HydratedUnit> {
  const out: Hydrated[] = [];
  const commands = new Map<number, CommandRow>();
  const toRead: number[] = [];
  for (const id of executionIds) {
    const row = fresh === 'all' || fresh.has(id) ? undefined : snapshots.row(id);
    if (!row) {
      toRead.push(id);
      continue;
    }
    out.push({ row, compiled: await cache.get(q, row.catalog_id), snapshot: snapshots.get(id, row.last_event_id)!, snapshotEventId: row.snapshot_event_id, inbox: [], reserved: [] });
  }
  const commandsToRead: CommandRef[] = [];
  const remembered = new Set<number>();
  for (const ref of commandRefs) {
    const row = fresh === 'all' ? undefined : snapshots.commands.get(ref.command_id);
    if (row) {
      commands.set(ref.command_id, row);
      remembered.add(ref.command_id);
    } else commandsToRead.push(ref);
  }
  const read = await readUnit(q, toRead, commandsToRead, snapshots.versions(toRead), EXECUTION_MACHINE_VERSION);
  for (const c of read.commands) {
    commands.set(c.command_id, c);
    remembered.delete(c.command_id);
  }
  for (const row of read.executions) out.push(await fromRow(q, cache, snapshots, row));
  // Commands named by reserved batch items are read too (a second read, only while a batch waits):
  // the fold gives those items a report's verdicts.
  const itemCommands = out.flatMap((h) => h.reserved.flatMap((r) => (r.event.command_id ? [{ execution_id: r.event.execution_id, command_id: r.event.command_id }] : [])));
  if (itemCommands.length) for (const c of (await readUnit(q, [], itemCommands, new Map(), EXECUTION_MACHINE_VERSION)).commands) commands.set(c.command_id, c);
  const found = new Set(out.map((h) => h.row.execution_id));
  return {
    executions: out.sort((a, b) => a.row.execution_id - b.row.execution_id),
    commands,
    remembered,
    missing: executionIds.filter((id) => !found.has(id)),
    readNothing: !toRead.length && !commandsToRead.length,
  };
}

async function fromRow(q: Queryable, cache: PlaybookCache, snapshots: HotSnapshots, r: ReadExecution): Promise<Hydrated> {
  const { applied, inbox, reserved: batches, ...row } = r;
  const compiled = await cache.get(q, row.catalog_id);
  const reserved = reservedItems(row, batches);
  if (!isLiveExecutionStatus(row.status)) return { row, compiled, snapshot: null, snapshotEventId: row.snapshot_event_id, inbox: [], reserved };
  const hot = snapshots.get(row.execution_id, row.last_event_id);
  if (hot) return { row, compiled, snapshot: hot, snapshotEventId: row.snapshot_event_id, inbox: [], reserved };
  const machine = compiled.machine;
  const from = await restoreStoredSnapshot(q, machine, row);
  const snapshotEventId = from ? row.snapshot_event_id : 0;
  // A start recorded before its treatment of playbook tasks was (a log of an earlier version) has
  // it decided from its whole log, as the views' folds decide it (actors/child-task-timers.ts).
  const started = from ? null : applied.find((e) => e.event_type === EVENT.executionStarted);
  const startInput = started ? await withChildTaskTimers(q, asObject(started.context).input as ExecutionInput) : undefined;
  // Events the machine already applied: their effects happened, so they are folded without them.
  const snapshot = foldEvents(machine, from, applied, () => startInput);
  return { row, compiled, snapshot, snapshotEventId, inbox, reserved };
}

/** The items of an execution's batches not routed yet, each as the report it routes and the id reserved for it. */
function reservedItems(row: ExecutionRow, batches: readonly ReservedBatch[]): ReservedItem[] {
  return batches.flatMap((b) => (b.events ?? []).map((item, i) => ({ eventId: Number(b.event_ids[i]), batchId: Number(b.batch_id), event: batchItemEvent({ execution_id: row.execution_id, worker_id: b.worker_id }, item, Number(b.event_ids[i])) })));
}

/** Folds events from the start (`execution.started` first); null when the log has no start yet. */
export function replay(machine: ExecutionMachine, events: LogEvent[]): Snapshot | null {
  return foldEvents(machine, null, events, (input) => withChildTaskTimersOf(input, events));
}

/**
 * Folds events into a snapshot without performing effects; from null, the log's `execution.started`
 * begins it, with the input `decided` gives (its start's, `childTaskTimers` decided).
 */
function foldEvents(machine: ExecutionMachine, from: Snapshot | null, events: LogEvent[], decided: (input: ExecutionInput) => ExecutionInput | undefined): Snapshot | null {
  let snap = from;
  let i = 0;
  for (; !snap && i < events.length; i++) {
    const ev = events[i];
    if (ev.event_type !== EVENT.executionStarted) continue;
    const input = asObject(ev.context).input as ExecutionInput;
    snap = pureInitialTransition(machine, decided(input) ?? input)[0];
  }
  if (!snap) return null;
  const rest: ExecutionEvent[] = [];
  for (; i < events.length; i++) {
    const mev = toMachineEvent(events[i]);
    if (mev) rest.push(mev);
  }
  return pureReplay(machine, snap, rest);
}
