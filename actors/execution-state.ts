import type { SnapshotFrom } from 'xstate';
import { EVENT } from '../machines/event-types.ts';
import { executionView, type ExecutionView } from '../machines/execution-view.ts';
import type { ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionEvent, ExecutionInput } from '../machines/execution/types.ts';
import { getExecution, loadEventsAfter, type EventRow, type ExecutionRow } from '../src/db/execution.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { CompiledPlaybook, PlaybookCache } from './playbook-cache.ts';
import { isObject } from '../src/objects.ts';
import { withChildTaskTimersOf } from './child-task-timers.ts';
import { pureInitialTransition, pureTransition, type MachineAction } from './pure-transition.ts';
import { toMachineEvent } from './to-machine-event.ts';
import { restoreStoredSnapshot } from './stored-snapshot.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;

/**
 * One step of an execution's fold: the machine event a log row stood for and the snapshot after
 * it; `ended`, the steps whose runs ended in it, in the order they ended (once per run).
 */
export type FoldStep = { eventId: number; event: ExecutionEvent | { type: typeof EVENT.executionStarted }; snapshot: Snapshot; view: ExecutionView | null; ended: string[] };

/**
 * An execution followed through its log: folds rows as they come (the log's `execution.started`
 * first) with the compiled statechart, keeping the snapshot before a terminal transition so the
 * view can name the steps it cut short. State private; callers read `view()`.
 */
export class ExecutionFollower {
  readonly compiled: CompiledPlaybook;
  #snapshot: Snapshot | null = null;
  #beforeEnd: Snapshot | null = null;
  #lastEventId = 0;

  /** `from`: a snapshot of the execution as of event `eventId`, folded on from there (its stored one). */
  constructor(compiled: CompiledPlaybook, from?: { snapshot: Snapshot; eventId: number }) {
    this.compiled = compiled;
    if (from) {
      this.#snapshot = from.snapshot;
      this.#lastEventId = from.eventId;
    }
  }

  get lastEventId(): number {
    return this.#lastEventId;
  }

  get snapshot(): Snapshot | null {
    return this.#snapshot;
  }

  /** Folds rows (in event_id order, past the last one folded); returns the steps that moved the machine. */
  fold(rows: Pick<EventRow, 'event_id' | 'event_type' | 'context' | 'result' | 'error'>[], withViews = false): FoldStep[] {
    const out: FoldStep[] = [];
    const machine = this.compiled.machine;
    for (const row of rows) {
      if (row.event_id <= this.#lastEventId) continue;
      this.#lastEventId = row.event_id;
      if (!this.#snapshot) {
        if (row.event_type !== EVENT.executionStarted) continue;
        const ctx = row.context && typeof row.context === 'object' ? (row.context as { input?: ExecutionInput }) : {};
        if (!ctx.input) continue;
        // Its treatment of playbook tasks decided from the log as the engine decides it (actors/child-task-timers.ts).
        const [snapshot, actions] = pureInitialTransition(machine, withChildTaskTimersOf(ctx.input, rows));
        this.#snapshot = snapshot;
        out.push({ eventId: row.event_id, event: { type: EVENT.executionStarted }, snapshot, view: withViews ? this.view() : null, ended: stepsEnded(actions) });
        continue;
      }
      if (this.#snapshot.status === 'done') continue;
      const ev = toMachineEvent(row);
      if (!ev) continue;
      const before = this.#snapshot;
      const [snapshot, actions] = pureTransition(machine, before, ev);
      this.#snapshot = snapshot;
      if (snapshot.status === 'done') this.#beforeEnd = before;
      out.push({ eventId: row.event_id, event: ev, snapshot, view: withViews ? this.view() : null, ended: stepsEnded(actions) });
    }
    return out;
  }

  /** The live view (null before the log's start is folded). */
  view(): ExecutionView | null {
    return this.#snapshot ? executionView(this.compiled.playbook, this.#snapshot, this.#beforeEnd) : null;
  }
}

/** The steps whose runs a transition ended, in order: its `step.exit` records (machines/execution/actions.ts exitRun). */
function stepsEnded(actions: readonly MachineAction[]): string[] {
  const ended: string[] = [];
  for (const a of actions) {
    if (a.type !== 'effect' || !isObject(a.params)) continue;
    const e = a.params;
    if (e.type === 'record' && e.eventType === EVENT.stepExit && typeof e.step === 'string') ended.push(e.step);
  }
  return ended;
}

/** The events already applied to an execution (inbox events past `applied_event_id` are not yet). */
export async function loadAppliedEvents(q: Queryable, row: ExecutionRow, after: number): Promise<EventRow[]> {
  if (row.applied_event_id <= after) return [];
  return (await loadEventsAfter(q, row.execution_id, after)).filter((e) => e.event_id <= row.applied_event_id);
}

/**
 * An execution's live state, hydrated from its whole log through the compiled statechart (the
 * same fold the engine does); undefined when no such execution exists.
 */
export async function readExecutionState(q: Queryable, cache: PlaybookCache, id: number): Promise<{ row: ExecutionRow; follower: ExecutionFollower } | undefined> {
  const row = await getExecution(q, id);
  return row && { row, follower: await followExecution(q, cache, row) };
}

/**
 * The fold of `row`'s log up to its `applied_event_id` (the state `row` was read at), from the
 * snapshot it stores (every SNAPSHOT_EVERY_EVENTS events and when it begins to wait, kept once it
 * finished) on, as the engine hydrates it. Refolding a 48,000-event log took the server's thread
 * 2 s for every /state poll and every signal.
 */
export async function followExecution(q: Queryable, cache: PlaybookCache, row: ExecutionRow): Promise<ExecutionFollower> {
  const compiled = await cache.get(q, row.catalog_id);
  // A stored snapshot is always of a running state, so the fold on from it still sees the
  // transition that ended the run (the view names the steps it cut short).
  const usable = row.snapshot_event_id > 0 && row.snapshot_event_id <= row.applied_event_id;
  const stored = usable ? await restoreStoredSnapshot(q, compiled.machine, row) : null;
  const follower = new ExecutionFollower(compiled, stored ? { snapshot: stored, eventId: row.snapshot_event_id } : undefined);
  follower.fold(await loadAppliedEvents(q, row, follower.lastEventId));
  return follower;
}
