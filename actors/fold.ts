import type { Effect, ExecutionEvent } from '../machines/execution.machine.ts';
import type { Admission, ExecutionContext, PendingCommand, SignalSent } from '../machines/execution/types.ts';
import { EVENT } from '../machines/event-types.ts';
import { isLiveExecutionStatus } from '../machines/statuses.ts';
import { executionStatusOf } from '../machines/execution/step-phase.ts';
import type { ChildPlaybook } from '../src/db/execution.repo.ts';
import type { CommandRow, CommandStatus } from '../src/db/command.repo.ts';
import type { EventRow, ExecutionStatus } from '../src/db/execution.repo.ts';
import type { UnitCommand, UnitCommandUpdate, UnitIdempotencyKey } from '../src/db/unit-write.ts';
import { asObject } from '../src/objects.ts';
import type { EventInput, EventResult, RoutedEvent } from '../src/protocol.ts';
import { effectRows } from './effect-rows.ts';
import { replay, type Hydrated, type ReservedItem } from './hydrate.ts';
import type { CompiledPlaybook, PlaybookCache } from './playbook-cache.ts';
import { admitKeyOf, roomKey } from './key-rooms.ts';
import { hasNeeds, noNeeds, type Needs, type Reads } from './prefetch.ts';
import { pureInitialTransition, pureTransition } from './pure-transition.ts';
import { routeReport } from './route-report.ts';
import { startInput } from './start-input.ts';
import { toMachineEvent } from './to-machine-event.ts';
import type { EffectHost, HeldRow, Snapshot, StartRequest, Subject, UnitEvent, UnitRows } from './unit-types.ts';
import { keyOf } from '../machines/execution/keys.ts';

type Held = { -readonly [K in keyof Subject]: Subject[K] };

const statusOf = (s: Snapshot): ExecutionStatus => executionStatusOf(s);
/** Events that are themselves a change of the execution's status (what it was moved to is their status). */
const STATUS_EVENTS: ReadonlySet<string> = new Set([EVENT.executionCancelled, EVENT.executionPaused, EVENT.executionResumed, EVENT.executionAdmitted]);
/** The pair that ends an execution (a cancel's end is execution.cancelled, a STATUS_EVENT). */
const ENDING_EVENTS: ReadonlySet<string> = new Set([EVENT.workflowCompleted, EVENT.workflowFailed, EVENT.playbookCompleted, EVENT.playbookFailed]);

const effectsOf = (actions: { type: string; params?: unknown }[]): Effect[] => actions.flatMap((a) => (a.type === 'effect' ? [a.params as Effect] : []));

/**
 * A batch item the fold routed at the id reserved for it (`eventId`): what became of it, whether
 * it was taken (`accepted`) by a running execution (`running`), and the commands folding it issued.
 */
export type RoutedItem = {
  readonly executionId: number;
  readonly batchId: number;
  readonly eventId: number;
  readonly result: EventResult;
  readonly accepted: boolean;
  readonly running: boolean;
  readonly issued: readonly { execution_id: number; seq: number }[];
};

/** Everything a finished fold decided, for the write step and for publishing after commit. */
export type Folded = {
  readonly held: readonly Subject[];
  readonly rows: UnitRows;
  readonly commandUpdates: ReadonlyMap<number, UnitCommandUpdate>;
  /** Catalog heads taken from memory: the write fails if a newer version exists. */
  readonly headChecks: readonly { path: string; version: number }[];
  readonly idempotencyKeys: readonly UnitIdempotencyKey[];
};

/**
 * The transition step of a unit of work, synchronous from end to end: holds the hydrated
 * executions, folds events into their machines with xstate's pure transition, and has each
 * transition's effects turned into rows (effect-rows.ts) from what was read before it. Events an
 * effect addresses to a held execution are delivered in this fold, after the effects of the
 * transition that sent them. What it lacked to read is `needs()`: redo it with those read.
 */
export class Fold {
  readonly #cache: PlaybookCache;
  readonly #held = new Map<number, Held>();
  readonly #rows: UnitRows = { events: [], commands: [], cancels: [], keychainCleanup: [], inbox: [], finished: [], waits: [], waitEnds: [], admissions: [], admissionEnds: [] };
  readonly #commandUpdates = new Map<number, UnitCommandUpdate>();
  readonly #headChecks: { path: string; version: number }[] = [];
  readonly #idempotencyKeys: UnitIdempotencyKey[] = [];
  readonly #queue: { executionId: number; event: EventInput }[] = [];
  readonly #needs = noNeeds();
  readonly #refused = new Set<number>();
  readonly #host: EffectHost;
  /** Starts each concurrency key can still admit at once in this fold (read before it). */
  readonly #room: Map<string, number>;
  readonly #items: RoutedItem[] = [];
  #idsTaken = 0;
  /** While inboxes are applied: events sent to held executions wait (see the constructor). */
  #inboxes = true;
  /** While a transition that ends an execution records its effects: the status it had, until its ending pair. */
  #endingFrom: { id: number; status: ExecutionStatus } | undefined;

  /**
   * Holds every hydrated execution, then applies their inbox events (with effects): all are held
   * first, so an effect addressed to one of them is delivered here, not appended behind its row.
   * The inbox is, in id order, the events appended by other transactions and the batch items at
   * their reserved ids, routed with a report's verdicts (`commands`: the rows they name). Events
   * effects send to held executions are delivered once every inbox is applied: after the ids
   * each execution's log already held, so the fold order stays the id order.
   */
  constructor(cache: PlaybookCache, hydrated: readonly Hydrated[], reads: Reads, commands: ReadonlyMap<number, CommandRow> = new Map(), now: () => number = Date.now) {
    this.#cache = cache;
    this.#host = this.#hostFor(reads, now);
    this.#room = new Map(reads.room);
    for (const x of hydrated) {
      const r = x.row;
      this.#held.set(r.execution_id, {
        id: r.execution_id,
        isNew: false,
        row: r,
        compiled: x.compiled,
        snapshot: x.snapshot,
        status: r.status,
        lastEventId: r.last_event_id,
        readLastEventId: r.last_event_id,
        snapshotEventId: x.snapshotEventId,
        dirty: false,
        parentCommandId: null,
      });
    }
    for (const x of hydrated) {
      if (!x.inbox.length && !x.reserved.length) continue;
      const h = this.#held.get(x.row.execution_id)!;
      h.dirty = true;
      // Inbox: events appended by other transactions (a child's result, a cancel) and batch items.
      for (const entry of inboxInIdOrder(x.inbox, x.reserved)) {
        if ('batchId' in entry) {
          this.#routeItem(entry, commands);
          continue;
        }
        if (!h.snapshot) {
          h.snapshot = replay(h.compiled.machine, [entry]);
          continue;
        }
        if (!isLiveExecutionStatus(h.status)) continue;
        const mev = toMachineEvent(entry);
        if (mev) {
          const before = h.status;
          const effects = this.#transition(h, mev);
          // A cancel delivered here (a parent's cascade) is itself the change of status, stored
          // saying so: what its effects record comes after it, as in #apply.
          this.#effectRows(h, effects, STATUS_EVENTS.has(mev.type) ? h.status : before);
        }
      }
    }
    this.#inboxes = false;
    this.#drain();
  }

  /** Creates and starts a new execution in this fold; returns its id. */
  start(req: StartRequest): number {
    this.#start(req);
    this.#drain();
    return req.executionId;
  }

  /**
   * Appends an event to a held execution and folds it; returns its event_id: the next one, or
   * `at`, an id reserved for it (a batch item's).
   */
  apply(executionId: number, event: EventInput, command?: CommandRow, at?: number): number {
    const id = this.#apply(executionId, command ? { ...event, context: { ...asObject(event.context), seq: command.seq } } : event, at);
    this.#drain();
    return id;
  }

  /** The report moves this command (a compare-and-set on what was read, in the write). */
  updateCommand(update: UnitCommandUpdate): void {
    this.#commandUpdates.set(update.command_id, update);
  }

  /** A command's status now: as read, or as a report folded here moved it. */
  commandStatus(cmd: CommandRow): CommandStatus {
    return this.#commandUpdates.get(cmd.command_id)?.status ?? cmd.status;
  }

  /** Whether a report folded here moved (or kept) this command. */
  commandReported(commandId: number): boolean {
    return this.#commandUpdates.has(commandId);
  }

  /** A report about this command was refused here. */
  refused(commandId: number): void {
    this.#refused.add(commandId);
  }

  /** The commands reports about which were refused here. */
  refusedCommands(): ReadonlySet<number> {
    return this.#refused;
  }

  /** The commands reports folded here move. */
  commandUpdates(): Iterable<UnitCommandUpdate> {
    return this.#commandUpdates.values();
  }

  /** The batch items routed at their reserved ids, in id order per execution. */
  routedItems(): readonly RoutedItem[] {
    return this.#items;
  }

  /** The write must fail if a newer version of these catalog heads (taken from memory) exists. */
  checkHeads(heads: readonly { path: string; version: number }[]): void {
    this.#headChecks.push(...heads);
  }

  /** An idempotency key written by the same statement as the start it names. */
  keepIdempotencyKey(key: UnitIdempotencyKey): void {
    this.#idempotencyKeys.push(key);
  }

  /** The context of a held execution still live (undefined when not held, unfolded or ended): what the queries below read. */
  #liveContext(executionId: number): ExecutionContext | undefined {
    const h = this.#held.get(executionId);
    return h?.snapshot && isLiveExecutionStatus(h.status) ? h.snapshot.context : undefined;
  }

  /** What a held execution waits for under `seq` (a command, a child, a wait), if it still does. */
  pendingOf(executionId: number, seq: number): PendingCommand | undefined {
    return this.#liveContext(executionId)?.pending[keyOf(seq)];
  }

  /** Whether a step of a held execution waits for signal `name` now. */
  waitsForSignal(executionId: number, name: string): boolean {
    return Object.values(this.#liveContext(executionId)?.pending ?? {}).some((p) => p.kind === 'wait' && p.signal === name);
  }

  /** Whether a held execution still waits for its admission (flow control), paused or not. */
  awaitsAdmission(executionId: number): boolean {
    return this.#liveContext(executionId)?.queued === true;
  }

  /** The signals a held execution keeps for steps that wait later, all names (none when not held or ended). */
  keptSignals(executionId: number): readonly SignalSent[] {
    return Object.values(this.#liveContext(executionId)?.signals ?? {}).flat();
  }

  /** A held execution's status now (undefined when not held). */
  statusOf(executionId: number): ExecutionStatus | undefined {
    return this.#held.get(executionId)?.status;
  }

  /** Commands issued so far in this fold. */
  get commandsIssued(): number {
    return this.#rows.commands.length;
  }

  /** The commands issued since `from` (a former `commandsIssued`). */
  issuedSince(from: number): readonly UnitCommand[] {
    return this.#rows.commands.slice(from);
  }

  /** What effects lacked from the database (rare: see prefetch.ts); undefined when nothing. */
  needs(): Needs | undefined {
    return hasNeeds(this.#needs) ? this.#needs : undefined;
  }

  /** What the fold decided (read-only; the fold is done with). */
  folded(): Folded {
    return {
      held: [...this.#held.values()],
      rows: this.#rows,
      commandUpdates: this.#commandUpdates,
      headChecks: this.#headChecks,
      idempotencyKeys: this.#idempotencyKeys,
    };
  }

  #start(req: StartRequest): void {
    const id = req.executionId;
    const rootId = req.parent?.rootExecutionId ?? id;
    const priority = req.priority ?? req.compiled.playbook.priority;
    const row: HeldRow = { execution_id: id, catalog_id: req.compiled.catalogId, path: req.compiled.path, parent_execution_id: req.parent?.executionId ?? null, root_execution_id: rootId };
    const h: Held = {
      id,
      isNew: true,
      row,
      compiled: req.compiled,
      snapshot: null,
      status: 'running',
      lastEventId: 0,
      readLastEventId: 0,
      snapshotEventId: 0,
      dirty: true,
      parentCommandId: req.parent?.commandId ?? null,
    };
    this.#held.set(id, h);
    // Admitted at once when its key had room as read (the write takes the slot or fails: then the
    // unit is read again); else queued (core.admission) until the admitter admits it.
    const a = req.admission && this.#admitAtStart(req.admission);
    const input = startInput(req, rootId, priority, a);
    this.#push(h, { event_type: EVENT.executionStarted, context: { ...req.origin, input, ...(req.requestedBy ? { requested_by: req.requestedBy } : {}) } });
    let queued: UnitEvent | undefined;
    if (a) {
      // By the database's clock, as a wait's wake-up (effect-rows.ts): its now() admits the run and extends the window.
      const notBefore = a.debounce ? new Date(this.#host.now() + a.debounce.seconds * 1000).toISOString() : null;
      this.#rows.admissions.push({ execution_id: id, limit_name: a.limit, limit_key: a.key, capacity: a.capacity, priority, not_before: notBefore, debounce_path: a.debounce ? req.compiled.path : null, debounce_key: a.debounce?.key ?? null, admitted: a.admitted === true });
      if (!a.admitted) queued = this.#push(h, { event_type: EVENT.executionQueued, context: { limit: a.limit, key: a.key, priority, ...(notBefore ? { debounce_until: notBefore } : {}) } });
    }
    const [snapshot, actions] = pureInitialTransition(req.compiled.machine, input);
    h.snapshot = snapshot;
    h.status = statusOf(snapshot);
    // It is what queues the execution: it carries the status after it (queued), as its schema says.
    if (queued) queued.status = h.status;
    this.#effectRows(h, effectsOf(actions), 'running');
  }

  /** `a` admitted at once when it waits on a concurrency key alone and the key had room as read (a slot taken); else `a` as it is. */
  #admitAtStart(a: Admission): Admission {
    const key = admitKeyOf(a);
    if (!key) return a;
    const k = roomKey(key.limit, key.key);
    const room = this.#room.get(k) ?? 0;
    if (room <= 0) return a;
    this.#room.set(k, room - 1);
    return { ...a, admitted: true };
  }

  /** Routes a batch item at its reserved id; its effects' events go after the ids the log held. */
  #routeItem(item: ReservedItem, commands: ReadonlyMap<number, CommandRow>): void {
    const ev: RoutedEvent = item.event;
    const issuedBefore = this.commandsIssued;
    const running = this.statusOf(ev.execution_id) === 'running';
    const { result, accepted } = routeReport(this, commands, ev, item.eventId);
    // The commands name their batch in the row the write inserts (no statement of its own), so a
    // claim of one, however soon and by whichever path, is the batch's (src/metrics.ts).
    const cmds = this.#rows.commands;
    for (let i = issuedBefore; i < cmds.length; i++) cmds[i].issued_by_batch = item.batchId;
    const issued = this.issuedSince(issuedBefore).map((c) => ({ execution_id: c.execution_id, seq: c.seq }));
    this.#items.push({ executionId: ev.execution_id, batchId: item.batchId, eventId: item.eventId, result, accepted, running, issued });
  }

  #apply(executionId: number, event: EventInput, at?: number): number {
    const h = this.#held.get(executionId);
    if (!h) throw new Error(`execution ${executionId} is not held by this unit`);
    const row = this.#push(h, event, at);
    if (!h.snapshot || !isLiveExecutionStatus(h.status)) return row.event_id; // terminal fast path: stored, nothing else changes
    const mev = toMachineEvent(row);
    if (mev) {
      const effects = this.#transition(h, mev);
      // An event that is itself the change of status (a cancel, a pause, a resume, an admission)
      // carries the status it moved the execution to: an event's status is the one after it.
      if (STATUS_EVENTS.has(mev.type)) row.status = h.status;
      this.#effectRows(h, effects, row.status);
    }
    return row.event_id;
  }

  /** Applies the events effects queued for held executions (a child's result to its parent, cancels), in order. */
  #drain(): void {
    if (this.#inboxes) return;
    for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
      // A cancel for an execution that ended ahead of it in this fold: its end stands (one terminal event).
      const status = this.#held.get(next.executionId)?.status;
      if (next.event.event_type === EVENT.executionCancelled && status !== undefined && !isLiveExecutionStatus(status)) continue;
      this.#apply(next.executionId, next.event);
    }
  }

  /**
   * The rows of a transition's effects. One that ended the execution (from status `before`) records
   * its last step.exit, loop.done or command.cancelled before its ending pair: the execution still
   * ran after them, so they say `before` (an event's status is the one after it).
   */
  #effectRows(h: Held, effects: Effect[], before: ExecutionStatus): void {
    this.#endingFrom = isLiveExecutionStatus(before) && !isLiveExecutionStatus(h.status) ? { id: h.id, status: before } : undefined;
    try {
      effectRows(this.#host, h, effects);
    } finally {
      this.#endingFrom = undefined;
    }
  }

  /** The status an event appended to `h` now carries (see #effectRows). */
  #statusOfNext(h: Held, eventType: string): ExecutionStatus {
    const ending = this.#endingFrom;
    if (ending?.id !== h.id) return h.status;
    if (!ENDING_EVENTS.has(eventType)) return ending.status;
    this.#endingFrom = undefined;
    return h.status;
  }

  #transition(h: Held, ev: ExecutionEvent): Effect[] {
    const [next, actions] = pureTransition(h.compiled.machine, h.snapshot!, ev);
    h.snapshot = next;
    h.status = statusOf(next);
    h.dirty = true;
    return effectsOf(actions);
  }

  /** Appends an event: at the next id, or at `at`, reserved for it earlier (not counted again). */
  #push(h: Held, e: EventInput, at?: number): UnitEvent {
    const row: UnitEvent = {
      execution_id: h.id,
      event_id: at ?? ++h.lastEventId,
      reserved: at !== undefined,
      catalog_id: h.row.catalog_id,
      event_type: e.event_type,
      status: this.#statusOfNext(h, e.event_type),
      step: e.step ?? null,
      command_id: e.command_id ?? null,
      worker_id: e.worker_id ?? null,
      context: e.context ?? null,
      result: e.result ?? null,
      error: e.error ?? null,
    };
    this.#rows.events.push(row);
    h.dirty = true;
    return row;
  }

  #hostFor(reads: Reads, now: () => number): EffectHost {
    return {
      now,
      rows: this.#rows,
      reads,
      needs: this.#needs,
      push: (h, e) => this.#push(this.#mine(h), e),
      send: (executionId, event) => {
        if (this.#held.has(executionId)) this.#queue.push({ executionId, event });
        else this.#rows.inbox.push({ executionId, event });
      },
      takeId: () => (this.#idsTaken < reads.ids.length ? reads.ids[this.#idsTaken++] : undefined),
      compile: (entry: ChildPlaybook): CompiledPlaybook => this.#cache.compile(entry),
      start: (req) => this.#start(req),
      heldChildren: (parentId) => [...this.#held.values()].filter((c) => c.row.parent_execution_id === parentId && isLiveExecutionStatus(c.status)).map((c) => c.id),
    };
  }

  /** The held record behind a subject effect-rows was given (only this fold's own are ever given). */
  #mine(s: Subject): Held {
    const h = this.#held.get(s.id);
    if (h !== s) throw new Error(`execution ${s.id} is not held by this fold`);
    return h;
  }
}

/** An execution's inbox, events in the log and reserved batch items together, in id order. */
function inboxInIdOrder(logged: readonly EventRow[], reserved: readonly ReservedItem[]): (EventRow | ReservedItem)[] {
  const idOf = (e: EventRow | ReservedItem) => ('batchId' in e ? e.eventId : e.event_id);
  return [...logged, ...reserved].sort((a, b) => idOf(a) - idOf(b));
}
