import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { createExecutionMachine, topStateOf, type ExecutionMachine } from '../../../machines/execution.machine.ts';
import type { Effect, ExecutionEvent, ExecutionInput, TaskOutcome } from '../../../machines/execution/types.ts';
import { parsePlaybook, type NormalizedPlaybook } from '../../../src/dsl/parse-playbook.ts';
import { numberOf } from '../../../machines/execution/keys.ts';

// Shared fixtures for the pure machine tests: build a playbook from a plain object, drive the
// execution machine with transition(), and turn its inputs and effects into event-log rows the
// way actors/effect-rows.ts stores them.

export type ExecutionSnapshot = SnapshotFrom<ExecutionMachine>;

/** A step of a playbook document, as a test writes it (the parser validates it). */
export type StepDoc = Record<string, unknown> & { step: string };

/** Parses a playbook given as a plain object (JSON is YAML); throws with the parser's problems. */
export function playbookOf(workflow: StepDoc[], workload: Record<string, unknown> = {}): NormalizedPlaybook {
  const doc = { apiVersion: 'svc/v1', kind: 'Playbook', metadata: { name: 'test', path: 'tests/machine' }, workload, workflow };
  const parsed = parsePlaybook(JSON.stringify(doc));
  if (!parsed.ok) throw new Error(`invalid test playbook: ${JSON.stringify(parsed.problems)}`);
  return parsed.playbook;
}

export function inputOf(overrides: Partial<ExecutionInput> = {}): ExecutionInput {
  return {
    executionId: 101,
    catalogId: 7,
    path: 'tests/machine',
    parentExecutionId: null,
    parentSeq: null,
    rootExecutionId: 101,
    workload: {},
    args: {},
    // As every start records it (actors/fold.ts): its playbook tasks have their own timers.
    childTaskTimers: true,
    ...overrides,
  };
}

/** A shell task (what the worker runs does not matter to the machine). */
export const shell = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ name, kind: 'shell', command: `echo ${name}`, ...extra });
export const childTask = (name: string, path: string, args?: Record<string, unknown>): Record<string, unknown> => ({
  name,
  kind: 'playbook',
  path,
  ...(args ? { args } : {}),
});

export const ok = (data: unknown = null): TaskOutcome => ({ status: 'ok', data });
export const err = (message: string, code = 'boom', data: unknown = null): TaskOutcome => ({ status: 'error', data, error: { message, code } });

export function effectsOf(actions: readonly { type: string; params?: unknown }[]): Effect[] {
  return actions.flatMap((a) => (a.type === 'effect' ? [a.params as Effect] : []));
}

export type IssueCommand = Extract<Effect, { type: 'issueCommand' }>;
export type StartChild = Extract<Effect, { type: 'startChild' }>;
export type RecordEffect = Extract<Effect, { type: 'record' }>;

export const issued = (effects: Effect[]): IssueCommand[] => effects.filter((e): e is IssueCommand => e.type === 'issueCommand');
export const childStarts = (effects: Effect[]): StartChild[] => effects.filter((e): e is StartChild => e.type === 'startChild');
export const records = (effects: Effect[]): RecordEffect[] => effects.filter((e): e is RecordEffect => e.type === 'record');
export const recordTypes = (effects: Effect[]): string[] => records(effects).map((r) => r.eventType);
/** Effects without the record-only ones: what the actor must actually do. */
export const actionable = (effects: Effect[]): Effect[] => effects.filter((e) => e.type !== 'record');

/**
 * One execution driven through the pure machine: every transition's effects are kept, and the
 * seqs of commands still pending can be read off the context.
 */
export class Driver {
  readonly machine: ExecutionMachine;
  readonly playbook: NormalizedPlaybook;
  snapshot: ExecutionSnapshot;
  /** Effects of the last transition. */
  last: Effect[];
  /** Every effect so far, in order. */
  readonly all: Effect[] = [];

  constructor(playbook: NormalizedPlaybook, input: ExecutionInput = inputOf()) {
    this.playbook = playbook;
    this.machine = createExecutionMachine(playbook);
    const [snapshot, actions] = initialTransition(this.machine, input);
    this.snapshot = snapshot;
    this.last = effectsOf(actions);
    this.all.push(...this.last);
  }

  static of(workflow: StepDoc[], input?: Partial<ExecutionInput>, workload?: Record<string, unknown>): Driver {
    return new Driver(playbookOf(workflow, workload), inputOf(input));
  }

  send(event: ExecutionEvent): Effect[] {
    const [snapshot, actions] = transition(this.machine, this.snapshot, event);
    this.snapshot = snapshot;
    this.last = effectsOf(actions);
    this.all.push(...this.last);
    return this.last;
  }

  complete(seq: number, tasks: Record<string, TaskOutcome>): Effect[] {
    return this.send({ type: 'command.completed', seq, tasks });
  }

  /** Completes a pending worker command with `ok(data)` for each of its tasks (last one carries `data`). */
  completeOk(seq: number, data: unknown = null): Effect[] {
    const cmd = this.command(seq);
    const tasks: Record<string, TaskOutcome> = {};
    cmd.tasks.forEach((t, i) => (tasks[t.name] = ok(i === cmd.tasks.length - 1 ? data : null)));
    return this.complete(seq, tasks);
  }

  childFinished(seq: number, status: 'completed' | 'failed' | 'cancelled', result: unknown = null, childId = 900 + seq): Effect[] {
    return this.send({
      type: 'child.finished',
      seq,
      child_execution_id: childId,
      status,
      result,
      error: status === 'completed' ? null : { message: `child ${status}`, code: `child_${status}` },
    });
  }

  /** The issueCommand effect (from any transition so far) for this seq. */
  command(seq: number): IssueCommand {
    const found = issued(this.all).find((c) => c.seq === seq);
    if (!found) throw new Error(`no command was issued with seq ${seq}`);
    return found;
  }

  /** The top state (running, completed, failed, cancelled); the step regions are in `snapshot.value`. */
  get value(): string {
    return topStateOf(this.snapshot.value);
  }

  get context() {
    return this.snapshot.context;
  }

  pendingSeqs(): number[] {
    return Object.keys(this.snapshot.context.pending).map(numberOf).sort((a, b) => a - b);
  }
}

// ---------------------------------------------------------------------------------------------
// Event-log rows, as actors/fold.ts stores them.

/** The fields of core.event that replay() reads. */
export type LogRow = { event_type: string; context: unknown; result: unknown; error: unknown };

export function startedRow(input: ExecutionInput): LogRow {
  return { event_type: 'execution.started', context: { input }, result: null, error: null };
}

/** The row a reported input event is stored as (the actor adds `context.seq` from the command row). */
export function inputRow(event: ExecutionEvent): LogRow {
  switch (event.type) {
    case 'command.completed':
      return { event_type: event.type, context: { seq: event.seq }, result: { tasks: event.tasks }, error: null };
    case 'command.failed':
      return { event_type: event.type, context: { seq: event.seq }, result: event.tasks ? { tasks: event.tasks } : null, error: event.error };
    case 'child.finished':
      return {
        event_type: event.type,
        context: { seq: event.seq, child_execution_id: event.child_execution_id, status: event.status },
        result: event.result,
        error: event.error,
      };
    case 'execution.cancelled':
      return { event_type: event.type, context: { reason: event.reason, cancelled_at: event.cancelled_at, ...(event.cascade === false ? { cascade: false } : {}) }, result: null, error: null };
    case 'timer.fired':
    case 'wait.timed_out':
      return { event_type: event.type, context: { seq: event.seq }, result: null, error: null };
    case 'signal.received':
      return {
        event_type: event.type,
        context: { signal: event.signal.name, seq: event.seq, by: event.signal.by, ...(event.signal.role !== undefined ? { role: event.signal.role } : {}) },
        result: event.signal.payload,
        error: null,
      };
    case 'execution.paused':
    case 'execution.resumed':
      return { event_type: event.type, context: null, result: null, error: null };
    case 'execution.admitted':
      return { event_type: event.type, context: null, result: event.args ?? null, error: null };
  }
}

/** The rows the actor appends for a transition's effects (all of them record-only for this execution). */
export function effectRows(effects: Effect[]): LogRow[] {
  const rows: LogRow[] = [];
  for (const e of effects) {
    switch (e.type) {
      case 'record':
        rows.push({ event_type: e.eventType, context: e.context ?? null, result: e.result ?? null, error: e.error ?? null });
        break;
      case 'issueCommand':
        rows.push({ event_type: 'command.issued', context: { seq: e.seq, loop_index: e.loopIndex }, result: null, error: null });
        break;
      case 'cancelCommands':
        rows.push({ event_type: 'command.cancelled', context: { seqs: e.seqs }, result: null, error: null });
        break;
      case 'startChild':
        rows.push({ event_type: 'child.started', context: { seq: e.seq, child_execution_id: 5000 + e.seq, path: e.path, task: e.task }, result: null, error: null });
        break;
      default:
        break;
    }
  }
  return rows;
}

/** Worker chatter around a command that the log keeps and the machine must ignore. */
export function workerRows(seq: number, tasks: string[]): LogRow[] {
  return [
    { event_type: 'command.claimed', context: { seq }, result: null, error: null },
    { event_type: 'command.started', context: { seq, loop_index: null }, result: null, error: null },
    ...tasks.map((task) => ({ event_type: 'call.done', context: { seq, task }, result: null, error: null })),
    { event_type: 'command.heartbeat', context: { seq }, result: null, error: null },
  ];
}

/** What a value looks like after a trip through a JSON column (undefined dropped, order kept). */
export function jsonRoundTrip<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * What a value looks like after a trip through a PostgreSQL `jsonb` column: besides JSON's
 * losses, object keys come back sorted (shorter keys first, then bytewise), as jsonb stores them.
 */
export function jsonbRoundTrip<T>(value: T): T {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v === null || typeof v !== 'object') return v;
    const keys = Object.keys(v).sort((a, b) => {
      const ba = Buffer.from(a);
      const bb = Buffer.from(b);
      return ba.length - bb.length || Buffer.compare(ba, bb);
    });
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = sort((v as Record<string, unknown>)[k]);
    return out;
  };
  return sort(jsonRoundTrip(value)) as T;
}

// ---------------------------------------------------------------------------------------------
// A small seeded PRNG (mulberry32) so random cases can be reproduced from their seed.

export class Rng {
  #s: number;
  readonly seed: number;
  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.#s = this.seed;
  }
  next(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  bool(p = 0.5): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
}
