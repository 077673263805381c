// The traces of the executions this server routes: after each unit's commit, its events go to
// their executions' traces (execution-trace.ts), and the spans they end go to the exporter.
// Everything happens after the commit and off the unit's path: `committed` only files the events.
//
// A trace must have seen its execution's log from the start to know what a closing event closes.
// Events this server did not route (another server's units, batch records, or all of them before a
// restart) leave a gap in the ids; the gap is read from the log, taken in without making spans (the
// server that committed them made those), and the unit's events follow it. An execution's units
// are taken in order, one after the other. Events a unit delivered to an execution outside it (a
// child's end to its parent, a cancel to a child) are taken in by that execution's trace, when this
// server holds it, as the events that follow what it has seen.
import { isTerminalExecutionStatus } from '../../machines/statuses.ts';
import { EVENT } from '../../machines/event-types.ts';
import { ExecutionTrace, type RowClaim, type SpanRecord } from './execution-trace.ts';
import type { TraceSalt } from './trace-ids.ts';
import type { CommittedEvent, CommittedUnit, DeliveredEvent, HeldExecution, TraceSink } from './trace-sink.ts';

/** Reads `limit` events of an execution's log after `afterEventId`, in order (src/db/execution.repo.ts loadEventsAfter). */
export type ReadEvents = (executionId: number, afterEventId: number, limit: number) => Promise<readonly CommittedEvent[]>;

/** Reads the claims an execution's cancelled commands `seqs` kept on their rows (src/db/command.repo.ts cancelledClaims). */
export type ReadClaims = (executionId: number, seqs: readonly number[]) => Promise<readonly RowClaim[]>;

export type ExecutionTracesOptions = {
  salt: TraceSalt;
  readEvents: ReadEvents;
  /** Without it a command cancelled before its worker's first report has no worker in its span. */
  readClaims?: ReadClaims;
  /** Hands finished spans to the exporter (never throws back here: failures are logged there). */
  emit: (spans: readonly SpanRecord[]) => void;
  log: { warn(obj: object, msg: string): void };
  /** Executions whose traces are held at most; the least recently routed goes first (it is read again if it comes back). */
  capacity?: number;
  /**
   * Now on the database's clock (WaitClock.databaseNow; Date.now when not given): the time of an
   * event the server wrote, which a worker's reported moments (context.at) and the log's
   * created_at are on. This server's own clock, 60 s off, drew a command from its issue to its end
   * 60 s long or 60 s short of nothing.
   */
  now?: () => number;
};

/** Traces held by default: a live execution's is a few hundred bytes plus what it has open. */
export const DEFAULT_TRACE_CAPACITY = 20_000;

const ENDING = new Set<string>([EVENT.playbookCompleted, EVENT.playbookFailed, EVENT.executionCancelled]);

export class ExecutionTraces implements TraceSink {
  readonly #o: ExecutionTracesOptions;
  readonly #capacity: number;
  // Map order is recency: a trace taken is put last, the first is the one to drop.
  readonly #traces = new Map<number, ExecutionTrace>();
  // An execution whose catch-up read is under way: its later units wait for it.
  readonly #chains = new Map<number, Promise<void>>();

  constructor(o: ExecutionTracesOptions) {
    this.#o = o;
    this.#capacity = o.capacity ?? DEFAULT_TRACE_CAPACITY;
  }

  /** Executions whose traces are held (for tests and the benchmark). */
  get held(): number {
    return this.#traces.size;
  }

  /** Reads of the log made to fill gaps, and the events they read (for tests and the benchmark). */
  readonly catchUps = { reads: 0, events: 0 };

  /** Resolves when every catch-up under way is done. */
  async settled(): Promise<void> {
    while (this.#chains.size) await Promise.all(this.#chains.values());
  }

  committed(unit: CommittedUnit): void {
    const seenMs = this.#o.now?.() ?? Date.now();
    const byExecution = new Map<number, CommittedEvent[]>();
    for (const ev of unit.rows.events) {
      const list = byExecution.get(ev.execution_id);
      if (list) list.push(ev);
      else byExecution.set(ev.execution_id, [ev]);
    }
    if (byExecution.size) {
      const held = new Map<number, HeldExecution>();
      for (const h of unit.held) held.set(h.id, h);
      for (const [id, events] of byExecution) this.#inOrder(id, () => this.#takeUnit(id, events, held.get(id), seenMs));
    }
    for (const d of unit.rows.inbox) this.#inOrder(d.executionId, () => this.#deliver(d, seenMs));
  }

  /** Runs `work` now, or after the execution's catch-up under way. */
  #inOrder(id: number, work: () => Promise<void> | undefined): void {
    const before = this.#chains.get(id);
    const next = before ? before.then(work) : work();
    if (!next) return;
    const chain = next.catch((err: unknown) => this.#o.log.warn({ err: String(err), execution_id: id }, 'trace catch-up failed; its spans until now are left out'));
    this.#chains.set(id, chain);
    void chain.then(() => {
      if (this.#chains.get(id) === chain) this.#chains.delete(id);
    });
  }

  #takeUnit(id: number, events: readonly CommittedEvent[], h: HeldExecution | undefined, seenMs: number): Promise<void> | undefined {
    const trace = this.#traces.get(id);
    const first = events[0].event_id;
    const after = trace ? trace.lastEventId : 0;
    if (first <= after + 1) {
      const t = trace ?? this.#create(id, h);
      return this.#withClaims(t, events, () => this.#take(t, events, h, seenMs));
    }
    // Records of an execution that ended before this server held it: nothing to trace.
    if (!trace && h && isTerminalExecutionStatus(h.status) && !events.some((e) => ENDING.has(e.event_type))) return undefined;
    this.catchUps.reads++;
    return this.#o.readEvents(id, after, first - after - 1).then((missed) => {
      this.catchUps.events += missed.length;
      const t = this.#traces.get(id) ?? this.#create(id, h);
      // Taken in for what they open and close; their spans were made where they were committed.
      t.take(missed, null, seenMs, []);
      return this.#withClaims(t, events, () => this.#take(t, events, h, seenMs));
    });
  }

  /**
   * Runs `take` once the claims of the commands `events` cancel before any report of their worker
   * are read from their rows (the log has none: the span would name no worker); at once when none
   * is. A failed read leaves those spans without their worker, not the events untaken.
   */
  #withClaims(trace: ExecutionTrace, events: readonly CommittedEvent[], take: () => void): Promise<void> | undefined {
    const read = this.#o.readClaims;
    const seqs = read ? trace.unclaimedCancelled(events) : [];
    if (!read || !seqs.length) {
      take();
      return undefined;
    }
    return read(trace.id, seqs).then(
      (claims) => {
        for (const c of claims) trace.claimedOnRow(c);
        take();
      },
      (err: unknown) => {
        this.#o.log.warn({ err: String(err), execution_id: trace.id }, "reading the claims of cancelled commands failed; their spans name no worker");
        take();
      },
    );
  }

  #deliver(d: DeliveredEvent, seenMs: number): undefined {
    const trace = this.#traces.get(d.executionId);
    if (!trace) return undefined;
    const ev = d.event;
    // Appended after whatever its log held: the next id as far as this trace knows (a later gap is read).
    this.#take(trace, [{ execution_id: d.executionId, event_id: trace.lastEventId + 1, event_type: ev.event_type, step: ev.step ?? null, context: ev.context ?? null, error: ev.error ?? null }], undefined, seenMs);
    return undefined;
  }

  #take(trace: ExecutionTrace, events: readonly CommittedEvent[], h: HeldExecution | undefined, seenMs: number): void {
    const fresh = events.filter((e) => e.event_id > trace.lastEventId);
    const spans: SpanRecord[] = [];
    trace.take(fresh, h?.snapshot?.context ?? null, seenMs, spans);
    if (trace.ended) this.#traces.delete(trace.id);
    else this.#hold(trace);
    if (spans.length) this.#o.emit(spans);
  }

  #create(id: number, h: HeldExecution | undefined): ExecutionTrace {
    const parentSeq = h?.snapshot?.context.input.parentSeq ?? null;
    const parent = h?.row.parent_execution_id != null && parentSeq !== null ? { executionId: h.row.parent_execution_id, seq: parentSeq } : null;
    return new ExecutionTrace(this.#o.salt, id, h?.row.root_execution_id ?? id, h?.row.path ?? '', parent);
  }

  #hold(trace: ExecutionTrace): void {
    this.#traces.delete(trace.id);
    this.#traces.set(trace.id, trace);
    while (this.#traces.size > this.#capacity) this.#traces.delete(this.#traces.keys().next().value!);
  }
}
