import { keyOf, numberOf } from '../../../machines/execution/keys.ts';
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { replay } from '../../../actors/hydrate.ts';
import { toMachineEvent } from '../../../actors/to-machine-event.ts';
import { createExecutionMachine, topStateOf, type ExecutionMachine } from '../../../machines/execution.machine.ts';
import type { Effect, ExecutionContext, ExecutionEvent, ExecutionInput, TaskOutcome } from '../../../machines/execution/types.ts';
import {
  childTask,
  Driver,
  effectRows,
  effectsOf,
  inputOf,
  inputRow,
  jsonbRoundTrip,
  jsonRoundTrip,
  ok,
  playbookOf,
  Rng,
  shell,
  startedRow,
  workerRows,
  type ExecutionSnapshot,
  type LogRow,
  type StepDoc,
} from './helpers.ts';

// Property: folding the stored event log with replay() (actors/hydrate.ts) gives, after
// every prefix of the log, the very snapshot (value and context) the live machine had at that
// point. Executions are random playbooks from a small grammar driven by random worker outcomes.
// Reproduce one case with REPLAY_SEED=<seed> REPLAY_CASES=1.

const BASE_SEED = Number(process.env.REPLAY_SEED ?? 20_250_611);
const CASES = Number(process.env.REPLAY_CASES ?? 320);
const MAX_DELIVERIES = 40;

type View = { value: unknown; context: ExecutionContext };
type Case = { seed: number; workflow: StepDoc[]; workload: Record<string, unknown>; rows: LogRow[]; live: View[]; finalValue: string };

const TASK_NAMES = ['a', 'fetch', 'bb', 'load', 'x1', 'transform'];
const CONDITIONS = [
  "{{ outcome.status == 'ok' }}",
  "{{ outcome.status == 'error' }}",
  '{{ vars.flag | default(false) }}',
  '{{ not vars.flag | default(false) }}',
  '{{ (vars.n | default(0)) < 2 }}',
  '{{ workload.flag }}',
];
const SETS: Record<string, unknown>[] = [{ flag: true }, { flag: false }, { n: '{{ (vars.n | default(0)) + 1 }}' }, { last: '{{ outcome.result }}' }];
// `vars.last` may be set by no arc of a generated playbook: registration refuses a bare read of it.
const LOOP_INPUTS = ['{{ workload.items0 }}', '{{ workload.items1 }}', '{{ vars.last | default(none) }}', '{{ workload.notalist }}'];

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const smallList = (rng: Rng): number[] => Array.from({ length: rng.int(0, 5) }, () => rng.int(0, 99));

function genPlaybook(rng: Rng): { workflow: StepDoc[]; workload: Record<string, unknown> } {
  const n = rng.int(1, 6);
  const names = Array.from({ length: n }, (_, i) => `s${i}`);
  if (rng.bool(0.2)) names[rng.int(0, n - 1)] = 'start';
  const workload = { items0: smallList(rng), items1: smallList(rng), notalist: 'text', flag: rng.bool() };
  const workflow = names.map((name, index): StepDoc => {
    const step: StepDoc = { step: name };
    const toolLess = rng.bool(0.15);
    if (!toolLess) {
      const taskNames = shuffled(rng, TASK_NAMES).slice(0, rng.int(1, 3));
      const tasks = taskNames.map((t) => (rng.bool(0.15) ? childTask(t, 'lib/child', { from: '{{ execution.id }}' }) : shell(t)));
      step.tool = tasks.length === 1 && rng.bool(0.3) ? tasks[0] : tasks;
      if (rng.bool(0.35)) {
        const loop: Record<string, unknown> = {
          in: rng.bool(0.4) ? smallList(rng) : rng.pick(LOOP_INPUTS),
          mode: rng.pick(['sequential', 'parallel']),
        };
        if (rng.bool(0.5)) loop.max_in_flight = rng.int(1, 3);
        if (rng.bool(0.5)) loop.iterator = 'row';
        step.loop = loop;
      }
    }
    // A step without tools mostly points forward: cycles of such steps end in step_cycle at once.
    const targets = toolLess && !rng.bool(0.1) ? names.slice(index + 1) : names;
    if (targets.length === 0) return step;
    const arc = (): string | Record<string, unknown> => {
      const target = rng.pick(targets);
      if (rng.bool(0.2)) return target;
      const a: Record<string, unknown> = { step: target };
      if (rng.bool(0.7)) a.when = rng.pick(CONDITIONS);
      if (rng.bool(0.3)) a.set = rng.pick(SETS);
      return a;
    };
    const arcs = () => Array.from({ length: rng.int(1, 3) }, arc);
    const shape = rng.next();
    if (shape < 0.25) return step;
    if (shape < 0.45) step.next = rng.pick(targets);
    else if (shape < 0.75) step.next = arcs();
    else step.next = { mode: rng.pick(['inclusive', 'exclusive']), arcs: arcs() };
    return step;
  });
  return { workflow, workload };
}

// The whole state value (every step region), not only the top state, must match.
const view = (s: ExecutionSnapshot): View => ({ value: s.value, context: s.context });

const randomData = (rng: Rng): unknown => {
  const n = rng.int(0, 9);
  return rng.pick([null, n, { n }, `v${n}`, [n, n + 1]]);
};

/** Runs one random execution live, recording the log rows and the live snapshot after each row. */
function runCase(seed: number): Case {
  const rng = new Rng(seed);
  const { workflow, workload } = genPlaybook(rng);
  const machine = createExecutionMachine(playbookOf(workflow, workload));
  const input: ExecutionInput = inputOf({ executionId: 1000 + (seed % 1000), rootExecutionId: 1000 + (seed % 1000), workload: { ...workload }, args: { seed } });
  const rows: LogRow[] = [];
  const live: View[] = [];
  const commands = new Map<number, { kind: 'worker' | 'child'; tasks: string[] }>();
  let snap: ExecutionSnapshot;

  const append = (row: LogRow) => {
    rows.push(row);
    live.push(view(snap));
  };
  const afterEffects = (effects: Effect[]) => {
    for (const e of effects) {
      if (e.type === 'issueCommand') commands.set(e.seq, { kind: 'worker', tasks: e.tasks.map((t) => t.name) });
      if (e.type === 'startChild') commands.set(e.seq, { kind: 'child', tasks: [e.task] });
    }
    for (const row of effectRows(effects)) append(row);
  };
  const deliver = (ev: ExecutionEvent) => {
    const row = inputRow(ev);
    // Live routing folds toMachineEvent(row): the event must survive being stored.
    expect(toMachineEvent(jsonRoundTrip(row)), `seed ${seed}: ${JSON.stringify(ev)}`).toEqual(ev);
    const before = snap;
    const frozen = structuredClone(before.context);
    const [next, actions] = transition(machine, before, ev);
    expect(before.context, `seed ${seed}: transition() changed the snapshot it was given`).toEqual(frozen);
    snap = next;
    append(row);
    afterEffects(effectsOf(actions));
    if (before.status === 'done') {
      expect(view(snap), `seed ${seed}: event after the end changed something`).toEqual(view(before));
      expect(actions, `seed ${seed}`).toEqual([]);
    }
  };

  const [first, actions] = initialTransition(machine, input);
  snap = first;
  append(startedRow(input));
  afterEffects(effectsOf(actions));

  for (let i = 0; i < MAX_DELIVERIES && snap.status === 'active'; i++) {
    const pending = Object.keys(snap.context.pending).map(numberOf);
    expect(pending.length, `seed ${seed}: running with nothing pending`).toBeGreaterThan(0);
    const r = rng.next();
    if (r < 0.03) {
      deliver({ type: 'execution.cancelled', reason: `cancel ${seed}`, cancelled_at: '2025-01-01T00:00:00.000Z' });
    } else if (r < 0.1) {
      const done = [...commands.keys()].filter((s) => !(keyOf(s) in snap.context.pending));
      const seq = done.length && rng.bool() ? rng.pick(done) : 9999;
      deliver({ type: 'command.completed', seq, tasks: { ghost: ok(1) } });
    } else {
      const seq = rng.pick(pending);
      const cmd = commands.get(seq)!;
      if (cmd.kind === 'child') {
        const status = rng.pick(['completed', 'completed', 'completed', 'failed', 'cancelled'] as const);
        deliver({
          type: 'child.finished',
          seq,
          child_execution_id: 5000 + seq,
          status,
          result: status === 'completed' ? randomData(rng) : null,
          error: status === 'failed' ? { message: 'child broke', code: 'child_failed' } : null,
        });
        continue;
      }
      if (rng.bool()) for (const row of workerRows(seq, cmd.tasks)) append(row);
      const tasks: Record<string, TaskOutcome> = {};
      const failAt = rng.bool(0.75) ? -1 : rng.int(0, cmd.tasks.length - 1);
      for (const [j, name] of cmd.tasks.entries()) {
        if (j === failAt) {
          if (rng.bool(0.4)) {
            deliver({ type: 'command.failed', seq, error: { message: `${name} died`, code: 'worker_lost' }, tasks });
            break;
          }
          tasks[name] = { status: 'error', data: randomData(rng), error: { message: `${name} failed`, code: 'task' } };
          deliver({ type: 'command.completed', seq, tasks });
          break;
        }
        tasks[name] = ok(randomData(rng));
      }
      if (failAt === -1) deliver({ type: 'command.completed', seq, tasks });
    }
  }
  if (snap.status === 'active' && rng.bool()) deliver({ type: 'execution.cancelled', reason: 'enough', cancelled_at: '' });
  if (snap.status === 'done') {
    // Late events: stored by the actor, folded to nothing.
    for (const seq of [...commands.keys()].slice(0, rng.int(0, 2))) deliver({ type: 'command.completed', seq, tasks: { late: ok() } });
  }
  return { seed, workflow, workload, rows, live, finalValue: topStateOf(snap.value) };
}

let memo: Case[] | undefined;
function cases(): Case[] {
  memo ??= Array.from({ length: CASES }, (_, i) => runCase(BASE_SEED + i));
  return memo;
}

/**
 * Replays every prefix of the stored log and compares with the live snapshot at that point. A
 * prefix that ends in a record-only row (step.enter, command.issued, call.done, …) must fold to
 * nothing: that row is checked to map to no machine event, so its replay is the previous one's.
 */
function checkReplay(c: Case, store: (row: LogRow) => LogRow): void {
  // Another machine object for the same playbook, as after a restart of the server.
  const machine: ExecutionMachine = createExecutionMachine(playbookOf(c.workflow, c.workload));
  const stored = c.rows.map(store);
  let previous: View | null = null;
  for (let k = 1; k <= stored.length; k++) {
    const row = stored[k - 1];
    const where = `seed ${c.seed} (REPLAY_SEED=${c.seed} REPLAY_CASES=1), after row ${k}/${stored.length} (${row.event_type})`;
    let got: View;
    if (previous && toMachineEvent(row) === null) {
      expect(row.event_type, where).not.toBe('execution.started');
      got = previous;
      // Same live snapshot as before this row, and same replay: nothing new to compare.
      if (c.live[k - 1] === c.live[k - 2]) continue;
    } else {
      const snap = replay(machine, stored.slice(0, k));
      expect(snap, where).not.toBeNull();
      got = { value: snap!.value, context: snap!.context };
    }
    expect(got, where).toEqual(c.live[k - 1]);
    previous = got;
  }
}

describe('replay(): the stored log folds to the live snapshot', () => {
  it(`generates varied executions (${CASES} cases from seed ${BASE_SEED})`, { timeout: 120_000 }, () => {
    const all = cases();
    expect(all).toHaveLength(CASES);
    const ends = new Set(all.map((c) => c.finalValue));
    if (CASES >= 300) {
      expect([...ends].sort()).toEqual(['cancelled', 'completed', 'failed', 'running']);
      const types = new Set(all.flatMap((c) => c.rows.map((r) => r.event_type)));
      for (const t of ['command.completed', 'command.failed', 'child.finished', 'execution.cancelled', 'loop.item', 'loop.done', 'command.cancelled', 'call.done']) {
        expect(types, t).toContain(t);
      }
      expect(all.filter((c) => c.rows.length > 30).length).toBeGreaterThan(CASES / 10);
    }
  });

  it('after every prefix, with rows stored as JSON (order of keys kept)', { timeout: 120_000 }, () => {
    for (const c of cases()) checkReplay(c, jsonRoundTrip);
  });

  // core.event.result and core.execution.snapshot are jsonb, which sorts object keys.
  it('after every prefix, with rows as PostgreSQL jsonb gives them back (keys sorted)', { timeout: 120_000 }, () => {
    for (const c of cases()) checkReplay(c, jsonbRoundTrip);
  });
});

describe('replay(): jsonb key order', () => {
  // "The last task" is the last in tool order, not the last key of the task map: jsonb returns
  // keys sorted (shorter first), not in the order the worker ran the tasks.
  it("a step's result replayed from jsonb rows is still the last task's data in tool order", () => {
    const d = Driver.of([{ step: 'start', tool: [shell('fetch'), shell('b')] }]);
    const ev: ExecutionEvent = { type: 'command.completed', seq: 1, tasks: { fetch: ok('F'), b: ok('B') } };
    d.send(ev);
    expect(d.context.steps.start.result).toBe('B');
    const rows = [startedRow(inputOf()), ...effectRows(d.all), inputRow(ev)].map(jsonbRoundTrip);
    const replayed = replay(d.machine, rows)!;
    expect(replayed.context.steps.start.result).toBe('B');
    expect(replayed.context.finished?.result).toBe('B');
  });
});
