import type { SnapshotFrom, StateValue } from 'xstate';
import type { Identity } from '../src/auth/identity.ts';
import { pureInitialTransition, pureTransition } from './pure-transition.ts';
import { EXECUTION_MACHINE_VERSION, type Effect, type ExecutionInput, type ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionContext, ExecutionEvent } from '../machines/execution/types.ts';
import { getCatalogEntry } from '../src/db/catalog.repo.ts';
import type { ClaimPolicy, CommandRow } from '../src/db/command.repo.ts';
import { allocateExecutionIds, appendInboxEvent, loadEventsAfter, runningChildren, type EventRow, type ExecutionRow, type ExecutionStatus } from '../src/db/execution.repo.ts';
import { writeUnit, type Claimer, type UnitCommand, type UnitCommandUpdate, type UnitEvent, type UnitExecutionUpdate, type UnitIdempotencyKey } from '../src/db/unit-write.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { EventInput } from '../src/protocol.ts';
import type { HotSnapshots } from './hot-snapshots.ts';
import type { CompiledPlaybook, PlaybookCache } from './playbook-cache.ts';
import { toMachineEvent } from './to-machine-event.ts';
import { scopesRemovedWhenFinished } from '../machines/keychain-owner-finished.ts';
import { COMMAND_RULES } from '../machines/command-rules.ts';
import { isTerminalExecutionStatus } from '../machines/statuses.ts';
import { asObject } from '../src/objects.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;

/** Events between two writes of an execution's stored snapshot (hydration refolds at most these). */
export const SNAPSHOT_EVERY_EVENTS = 64;

/** One execution held by this unit: its lock is taken (or it is new), its state is in memory. */
type Held = {
  id: number;
  isNew: boolean;
  row: Pick<ExecutionRow, 'execution_id' | 'catalog_id' | 'path' | 'parent_execution_id' | 'root_execution_id'>;
  compiled: CompiledPlaybook;
  snapshot: Snapshot | null; // null for finished executions: late events take the fast path
  status: ExecutionStatus;
  lastEventId: number;
  /** last_event_id as read (0 for a new execution): its write fails if the row has moved on since. */
  readLastEventId: number;
  /** The last event the stored snapshot holds (0: none stored). */
  snapshotEventId: number;
  dirty: boolean;
};


export type StartRequest = {
  compiled: CompiledPlaybook;
  /** An id allocated beforehand (batched starts allocate all of theirs in one query). */
  executionId?: number;
  workload: Record<string, unknown>;
  args: Record<string, unknown>;
  parent?: { executionId: number; rootExecutionId: number; seq: number; commandId?: number | null };
  /** Who asked for it (an API request), recorded on `execution.started` as `requested_by`. */
  requestedBy?: Identity;
  /** Written beside the input in the `execution.started` context (where the execution came from). */
  origin?: Record<string, unknown>;
};

const statusOf = (s: Snapshot): ExecutionStatus => {
  const v = String(s.value);
  return isTerminalExecutionStatus(v) ? v : 'running';
};

/**
 * A unit of work over a set of executions inside one transaction: fold events into their
 * machines, turn the returned effects into rows, and write everything with a handful of
 * statements at flush. The caller holds the per-execution locks of loaded executions.
 */
export class ExecutionUnit {
  readonly q: Queryable;
  readonly cache: PlaybookCache;
  readonly snapshots: HotSnapshots | undefined;
  readonly held = new Map<number, Held>();
  readonly events: UnitEvent[] = [];
  readonly newCommands: UnitCommand[] = [];
  readonly commandUpdates = new Map<number, UnitCommandUpdate>();
  readonly cancels: { execution_id: number; seq: number }[] = [];
  readonly keychainCleanup: { execution_id: number; scopes: string[] }[] = [];
  /** Catalog heads this unit took from memory: its write fails if a newer version exists. */
  readonly headChecks: { path: string; version: number }[] = [];
  /** Keys of the starts in this unit, written by its statement with them. */
  readonly idempotencyKeys: UnitIdempotencyKey[] = [];
  #parentCommandIds = new Map<number, number | null>();
  /** Executions outside this unit that got an inbox event; route them after commit. */
  readonly wakes = new Set<number>();
  readonly finished: { executionId: number; status: ExecutionStatus }[] = [];
  #queue: { executionId: number; event: EventInput }[] = [];
  commandsGenerated = 0;

  readonly #singleStatement: boolean;

  /**
   * `snapshots`: this process's hot snapshots; the caller publishes to them after commit.
   * `singleStatement`: no transaction is open, so flush() must be the only write (starts, and
   * routing from memory); the write statement then takes the held executions' advisory locks.
   */
  constructor(q: Queryable, cache: PlaybookCache, snapshots?: HotSnapshots, opts: { singleStatement?: boolean } = {}) {
    this.q = q;
    this.cache = cache;
    this.snapshots = snapshots;
    this.#singleStatement = opts.singleStatement ?? false;
  }

  /**
   * Hydrates locked executions: each from the hot snapshot when nothing happened since this
   * process committed it; else from the stored snapshot (or none, when missing or of another
   * machine version) refolded through the events already applied. Then applies their inbox
   * events with effects. All are held before any inbox is applied, so an effect addressed to
   * one of them is delivered in memory, not appended behind the row we loaded.
   */
  async holdAll(rows: ExecutionRow[]): Promise<void> {
    const inboxes: { h: Held; events: EventRow[] }[] = [];
    for (const row of rows) {
      const h = await this.#hydrate(row);
      if (h.inbox.length) inboxes.push({ h: h.held, events: h.inbox });
    }
    for (const { h, events } of inboxes) {
      // Inbox: events appended by other transactions (a child's result, a batch, a cancel).
      for (const ev of events) {
        h.dirty = true;
        if (!h.snapshot) {
          h.snapshot = replay(h.compiled.machine, [ev]);
          continue;
        }
        if (h.status !== 'running') continue;
        const mev = toMachineEvent(ev);
        if (mev) await this.#perform(h, this.#transition(h, mev));
      }
      await this.drain();
    }
  }

  async #hydrate(row: ExecutionRow): Promise<{ held: Held; inbox: EventRow[] }> {
    const compiled = await this.cache.get(this.q, row.catalog_id);
    const h: Held = {
      id: row.execution_id,
      isNew: false,
      row,
      compiled,
      snapshot: null,
      status: row.status,
      lastEventId: row.last_event_id,
      readLastEventId: row.last_event_id,
      snapshotEventId: row.snapshot_event_id,
      dirty: false,
    };
    this.held.set(h.id, h);
    if (row.status !== 'running') return { held: h, inbox: [] };
    const hot = this.snapshots?.get(h.id, row.last_event_id);
    if (hot) {
      h.snapshot = hot;
      return { held: h, inbox: [] };
    }
    const machine = compiled.machine;
    const stored = row.snapshot && row.machine_version === EXECUTION_MACHINE_VERSION ? (row.snapshot as { value: StateValue; context: ExecutionContext }) : null;
    if (!stored) h.snapshotEventId = 0;
    const after = row.last_event_id > h.snapshotEventId ? await loadEventsAfter(this.q, h.id, h.snapshotEventId) : [];
    // Events the machine already applied: their effects happened, so they are folded without them.
    h.snapshot = foldEvents(machine, stored ? machine.resolveState(stored) : null, after.filter((e) => e.event_id <= row.applied_event_id));
    return { held: h, inbox: after.filter((e) => e.event_id > row.applied_event_id) };
  }

  /** Creates and starts a new execution in this unit; returns its id. */
  async start(req: StartRequest): Promise<number> {
    const id = req.executionId ?? (await allocateExecutionIds(this.q, 1))[0];
    const rootId = req.parent?.rootExecutionId ?? id;
    const row = { execution_id: id, catalog_id: req.compiled.catalogId, path: req.compiled.path, parent_execution_id: req.parent?.executionId ?? null, root_execution_id: rootId };
    this.#parentCommandIds.set(id, req.parent?.commandId ?? null);
    const h: Held = { id, isNew: true, row, compiled: req.compiled, snapshot: null, status: 'running', lastEventId: 0, readLastEventId: 0, snapshotEventId: 0, dirty: true };
    this.held.set(id, h);
    const input: ExecutionInput = {
      executionId: id,
      catalogId: req.compiled.catalogId,
      path: req.compiled.path,
      parentExecutionId: req.parent?.executionId ?? null,
      parentSeq: req.parent?.seq ?? null,
      rootExecutionId: rootId,
      workload: req.workload,
      args: req.args,
    };
    this.#push(h, { event_type: 'execution.started', context: { ...req.origin, input, ...(req.requestedBy ? { requested_by: req.requestedBy } : {}) } });
    const [snapshot, actions] = pureInitialTransition(req.compiled.machine, input);
    h.snapshot = snapshot;
    h.status = statusOf(snapshot);
    await this.#perform(h, actions.flatMap((a) => (a.type === 'effect' ? [a.params as Effect] : [])));
    await this.drain();
    return id;
  }

  /** Appends an event to a held execution and folds it; returns its event_id. */
  async apply(executionId: number, event: EventInput, command?: CommandRow): Promise<number> {
    const h = this.held.get(executionId);
    if (!h) throw new Error(`execution ${executionId} is not held by this unit`);
    const row = this.#push(h, command ? { ...event, context: { ...asObject(event.context), seq: command.seq } } : event);
    if (!h.snapshot || h.status !== 'running') return row.event_id; // terminal fast path: stored, nothing else changes
    const mev = toMachineEvent(row);
    if (mev) {
      const effects = this.#transition(h, mev);
      // The cancel is itself the terminal event: it carries the status it ends the execution with.
      if (mev.type === 'execution.cancelled') row.status = h.status;
      await this.#perform(h, effects);
    }
    await this.drain();
    return row.event_id;
  }

  /** Applies events that effects queued for executions held by this unit (a child's result to its parent, cancels). */
  async drain(): Promise<void> {
    while (this.#queue.length) {
      const { executionId, event } = this.#queue.shift()!;
      await this.apply(executionId, event);
    }
  }

  #transition(h: Held, ev: ExecutionEvent): Effect[] {
    const [next, actions] = pureTransition(h.compiled.machine, h.snapshot!, ev);
    h.snapshot = next;
    h.status = statusOf(next);
    h.dirty = true;
    return actions.flatMap((a) => (a.type === 'effect' ? [a.params as Effect] : []));
  }

  #push(h: Held, e: EventInput): UnitEvent {
    const row: UnitEvent = {
      execution_id: h.id,
      event_id: ++h.lastEventId,
      catalog_id: h.row.catalog_id,
      event_type: e.event_type,
      status: h.status,
      step: e.step ?? null,
      command_id: e.command_id ?? null,
      worker_id: e.worker_id ?? null,
      context: e.context ?? null,
      result: e.result ?? null,
      error: e.error ?? null,
    };
    this.events.push(row);
    h.dirty = true;
    return row;
  }

  async #perform(h: Held, effects: Effect[]): Promise<void> {
    for (const e of effects) {
      switch (e.type) {
        case 'record':
          this.#push(h, { event_type: e.eventType, step: e.step, context: e.context, result: e.result, error: e.error }).status = h.status;
          break;
        case 'issueCommand': {
          this.newCommands.push({
            execution_id: h.id,
            catalog_id: h.row.catalog_id,
            seq: e.seq,
            step: e.step,
            loop_index: e.loopIndex,
            status: COMMAND_RULES.initial,
            input: { path: h.row.path, tasks: e.tasks, context: e.context, keychain: e.keychain },
            worker_id: null,
            claim_token: null,
          });
          // The command_id is joined in by the write statement, which inserts both.
          this.#push(h, { event_type: 'command.issued', step: e.step, context: { seq: e.seq, loop_index: e.loopIndex } }).issued_seq = e.seq;
          this.commandsGenerated++;
          break;
        }
        case 'cancelCommands': {
          const seqs = new Set(e.seqs);
          const insertedHere = new Set<number>();
          for (const c of this.newCommands) {
            if (c.execution_id !== h.id || !seqs.has(c.seq)) continue;
            c.status = COMMAND_RULES.cancel.to; // issued and cancelled in this same unit: never offered to a worker
            insertedHere.add(c.seq);
          }
          for (const seq of e.seqs) if (!insertedHere.has(seq)) this.cancels.push({ execution_id: h.id, seq });
          this.#push(h, { event_type: 'command.cancelled', context: { seqs: e.seqs } });
          break;
        }
        case 'startChild': {
          const entry = await getCatalogEntry(this.q, e.path);
          if (!entry) {
            this.#queue.push({ executionId: h.id, event: childResult(e.seq, 0, 'failed', null, { message: `playbook ${e.path} not found in the catalog`, code: 'not_found' }) });
            break;
          }
          const compiled = this.cache.compile(entry);
          const workload = { ...compiled.playbook.workload, ...e.args };
          const childId = await this.start({ compiled, workload, args: e.args, parent: { executionId: h.id, rootExecutionId: h.row.root_execution_id, seq: e.seq } });
          this.#push(h, { event_type: 'child.started', step: e.step, context: { seq: e.seq, child_execution_id: childId, path: e.path, task: e.task } });
          break;
        }
        case 'cancelChildren': {
          const inUnit = [...this.held.values()].filter((c) => c.row.parent_execution_id === h.id && c.status === 'running').map((c) => c.id);
          const stored = await runningChildren(this.q, h.id);
          for (const childId of new Set([...inUnit, ...stored])) {
            const cancel = { event_type: 'execution.cancelled', context: { reason: `parent execution ${h.id} ended`, cancelled_at: new Date().toISOString() } };
            await this.#send(childId, cancel);
          }
          break;
        }
        case 'finish': {
          this.finished.push({ executionId: h.id, status: e.finished.status });
          // The keychain-entry machine's owner-finished transition decides which entries go.
          this.keychainCleanup.push({ execution_id: h.id, scopes: scopesRemovedWhenFinished(h.row.parent_execution_id === null) });
          const ctx = h.snapshot!.context;
          if (ctx.input.parentExecutionId !== null && ctx.input.parentSeq !== null) {
            await this.#send(
              ctx.input.parentExecutionId,
              childResult(ctx.input.parentSeq, h.id, e.finished.status, e.finished.result, e.finished.error),
            );
          }
          break;
        }
      }
    }
  }

  /** Delivers an event to another execution: in this unit when held, else through its inbox. */
  async #send(executionId: number, event: EventInput): Promise<void> {
    if (this.held.has(executionId)) {
      this.#queue.push({ executionId, event });
      return;
    }
    if (this.#singleStatement) throw new NeedsTransaction(`execution ${executionId} is not held: a write outside the unit's statement needs a transaction`);
    const appended = await appendInboxEvent(this.q, executionId, { event_type: event.event_type, context: event.context, result: event.result, error: event.error });
    if (appended?.status === 'running') this.wakes.add(executionId);
  }

  /**
   * Writes everything in one statement. With `claims`, new commands go straight to those workers
   * in order, up to each one's `max` (claim-ahead), and older pending ones (and stranded ones
   * `claimPolicy` lets go) fill what is left; returns the commands they now hold.
   */
  async flush(claims: Claimer[] = [], claimPolicy: ClaimPolicy | null = null): Promise<CommandRow[]> {
    const older: Claimer[] = [];
    const fresh = this.newCommands.filter((c) => COMMAND_RULES.claim.from.includes(c.status));
    for (const claim of claims) {
      let handed = 0;
      while (handed < claim.max && fresh.length) {
        const c = fresh.shift()!;
        c.status = COMMAND_RULES.claim.to; // the insert takes it for the claimer (attempt 1)
        c.worker_id = claim.workerId;
        c.claim_token = claim.token;
        handed++;
      }
      if (claim.max > handed) older.push({ ...claim, max: claim.max - handed });
    }
    const executions: UnitExecutionUpdate[] = [];
    const newExecutions = [];
    const lateAdvances = [];
    for (const h of this.held.values()) {
      if (!h.dirty) continue;
      if (!h.snapshot) {
        lateAdvances.push({ execution_id: h.id, last_event_id: h.lastEventId }); // a late event for a finished execution
        continue;
      }
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
      if (writeSnapshot) h.snapshotEventId = h.lastEventId; // for publish(): what the stored snapshot now holds
      if (h.isNew) {
        newExecutions.push({
          ...update,
          catalog_id: h.row.catalog_id,
          path: h.row.path,
          parent_execution_id: h.row.parent_execution_id,
          root_execution_id: h.row.root_execution_id,
          parent_command_id: this.#parentCommandIds.get(h.id) ?? null,
        });
      } else executions.push({ ...update, expected_last_event_id: h.readLastEventId });
    }
    return writeUnit(this.q, {
      // Without a transaction, the statement takes the locks itself: held executions that exist.
      locks: this.#singleStatement ? [...this.held.values()].filter((h) => !h.isNew).map((h) => h.id) : [],
      newExecutions,
      executions,
      lateAdvances,
      commands: this.newCommands,
      events: this.events,
      commandUpdates: [...this.commandUpdates.values()],
      cancels: this.cancels,
      keychainCleanup: this.keychainCleanup,
      claimOlder: older,
      claimPolicy,
      headChecks: this.headChecks,
      idempotencyKeys: this.idempotencyKeys,
    });
  }

  /** After commit: this process now knows the state of every execution it held. */
  publish(): void {
    if (!this.snapshots) return;
    for (const h of this.held.values()) {
      if (h.snapshot && h.status === 'running') this.snapshots.set(h.id, h.lastEventId, h.snapshot, h.snapshotEventId);
      else this.snapshots.delete(h.id);
    }
  }
}

/** A unit without a transaction met work that needs one (a write beside its statement). */
export class NeedsTransaction extends Error {}

function childResult(seq: number, childId: number, status: string, result: unknown, error: unknown): EventInput {
  return { event_type: 'child.finished', context: { seq, child_execution_id: childId, status }, result, error };
}

/** Folds events from the start (`execution.started` first); null when the log has no start yet. */
export function replay(machine: ExecutionMachine, events: Pick<EventRow, 'event_type' | 'context' | 'result' | 'error'>[]): Snapshot | null {
  return foldEvents(machine, null, events);
}

/** Folds events into a snapshot without performing effects; from null, the log's `execution.started` begins it. */
export function foldEvents(machine: ExecutionMachine, from: Snapshot | null, events: Pick<EventRow, 'event_type' | 'context' | 'result' | 'error'>[]): Snapshot | null {
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
