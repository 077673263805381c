import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getShortestPaths } from 'xstate/graph';
import { createExecutionMachine, topStateOf } from '../../../machines/execution.machine.ts';
import { compileStatechart, type ActionRef, type GuardRef, type StateNodeJson, type TransitionJson } from '../../../machines/playbook-statechart.ts';
import type { ExecutionEvent } from '../../../machines/execution/types.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { Driver, err, inputOf, ok, playbookOf, records, shell, type ExecutionSnapshot, type StepDoc } from './helpers.ts';
import { keyOf, numberOf } from '../../../machines/execution/keys.ts';

// The statechart decides: arcs are transitions guarded by `arc` (their `when` in the params),
// runs end by `runEnded`, loops refill by `loopHasRoom`, the execution ends by `failing` /
// `allDone`. These tests read the definition and drive the machine through those transitions.

const OK = "{{ outcome.status == 'ok' }}";

const hello = () => {
  const parsed = parsePlaybook(readFileSync(new URL('../../../examples/hello.yaml', import.meta.url), 'utf8'));
  if (!parsed.ok) throw new Error('examples/hello.yaml does not parse');
  return parsed.playbook;
};

/** Every transition of a chart (under always and on), with the path of the node that holds it. */
function transitions(node: StateNodeJson, path = 'execution'): { at: string; t: TransitionJson }[] {
  const out: { at: string; t: TransitionJson }[] = [];
  for (const t of node.always ?? []) out.push({ at: path, t });
  for (const ts of Object.values(node.on ?? {})) for (const t of Array.isArray(ts) ? ts : [ts]) out.push({ at: path, t });
  for (const [k, child] of Object.entries(node.states ?? {})) out.push(...transitions(child, `${path}.${k}`));
  return out;
}
const guardName = (g: GuardRef | undefined) => (g === undefined ? undefined : typeof g === 'string' ? g : g.type);
const actionNames = (a: ActionRef | ActionRef[] | undefined): string[] => (a === undefined ? [] : (Array.isArray(a) ? a : [a]).map((x) => (typeof x === 'string' ? x : x.type)));
function entryActions(node: StateNodeJson): string[] {
  return [...actionNames(node.entry), ...Object.values(node.states ?? {}).flatMap(entryActions)];
}

describe('the definition carries the decisions', () => {
  it('hello: each arc is a transition guarded by `arc` with its when; runs end by runEnded; the loop refills by loopHasRoom', () => {
    const chart = compileStatechart(hello());
    const r = chart.states.running.states!;
    expect(r.start.always![0]).toMatchObject({ target: `#${r.square.id}.active`, guard: { type: 'arc', params: { from: 'start', index: 0, mode: 'exclusive' } }, actions: { type: 'takeArc', params: { from: 'start', index: 0 } } });
    expect(r.square.always![0]).toMatchObject({ target: `#${r.report.id}.active`, guard: { type: 'arc', params: { from: 'square', index: 0, when: OK, mode: 'exclusive' } } });
    expect(r.start.states!.idle.always![0]).toMatchObject({ target: 'active', guard: 'entry' });
    expect(r.square.states!.active.entry).toEqual({ type: 'startRun', params: { step: 'square' } });
    expect(r.square.states!.active.always!.slice(0, 2)).toMatchObject([
      { target: 'completed', guard: { type: 'runEnded', params: { step: 'square', status: 'ok', last: true } }, actions: { type: 'exitRun' } },
      { target: 'failed', guard: { type: 'runEnded', params: { step: 'square', status: 'error', last: true } } },
    ]);
    expect(r.square.states!.active.states!.iterating.always!.map((t) => guardName(t.guard))).toEqual(['loopHasRoom', 'loopDone']);
    expect(r.square.always!.map((t) => guardName(t.guard))).toEqual(['arc', 'arcError', 'unhandledFailure', 'routed']);
    expect(chart.states.running.always!.map((t) => [guardName(t.guard), t.target])).toEqual([['failing', 'failed'], ['allDone', 'completed']]);
    expect(chart.states.running.on!['command.completed']).toMatchObject({ guard: 'pendingCommand', actions: 'recordOutcome' });
  });

  it('an inclusive fork: each arc is a transition of its target\'s region, guarded by `arc`; the regions end runs by runEnded', () => {
    const chart = compileStatechart(
      playbookOf([
        { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: [{ step: 'x', when: OK }, 'y'] } },
        { step: 'x', tool: shell('x') },
        { step: 'y', tool: shell('y') },
      ]),
    );
    const r = chart.states.running.states!;
    expect(r.y.states!.idle.always![0]).toMatchObject({ target: 'active', guard: { type: 'arc', params: { from: 'start', index: 1, mode: 'inclusive' } }, actions: { type: 'takeArc', params: { from: 'start', index: 1 } } });
    expect(r.x.states!.idle.always![0]).toMatchObject({ target: 'active', guard: { type: 'arc', params: { from: 'start', index: 0, when: OK, mode: 'inclusive' } } });
    expect(r.start.states!.idle.always![0]).toMatchObject({ target: 'active', guard: 'entry' });
    expect(r.x.states!.active.entry).toEqual({ type: 'startRun', params: { step: 'x' } });
    expect(r.x.states!.active.always!.slice(0, 3)).toMatchObject([
      { target: 'completed', guard: { type: 'runEnded', params: { step: 'x', status: 'ok', last: true } }, actions: { type: 'exitRun' } },
      { target: 'failed', guard: { type: 'runEnded', params: { step: 'x', status: 'error', last: true } } },
      { guard: { type: 'runEnded', params: { step: 'x', last: false } } },
    ]);
    expect(r.x.always!.map((t) => guardName(t.guard))).toEqual(['arcError', 'unhandledFailure', 'routed']);
    expect(chart.states.running.always!.map((t) => [guardName(t.guard), t.target])).toEqual([['failing', 'failed'], ['allDone', 'completed']]);
  });

  it('every guard and action the chart names is implemented by the machine, and every decision is a guarded transition', () => {
    const pb = playbookOf([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: [{ step: 'l', when: OK, set: { x: 1 } }, 'c'] } },
      { step: 'l', loop: { in: [1, 2], mode: 'parallel', max_in_flight: 1 }, tool: shell('t'), next: [{ step: 'l', when: '{{ not vars.again | default(false) }}', set: { again: true } }] },
      { step: 'c', tool: { name: 'k', kind: 'playbook', path: 'lib/k' } },
    ]);
    const chart = compileStatechart(pb);
    const machine = createExecutionMachine(pb);
    const all = transitions(chart);
    const guards = new Set(all.flatMap(({ t }) => (t.guard ? [guardName(t.guard)!] : [])));
    const actions = new Set([...all.flatMap(({ t }) => actionNames(t.actions)), ...entryActions(chart)]);
    for (const g of guards) expect(machine.implementations.guards, g).toHaveProperty(g);
    for (const a of actions) expect(machine.implementations.actions, a).toHaveProperty(a);
    // Eventless transitions all have a guard (no unconditional move), and the only unguarded
    // event transition is cancel.
    for (const { at, t } of all) if (t.guard === undefined) expect(at, JSON.stringify(t)).toBe('execution.running');
    expect([...guards].sort()).toEqual(['allDone', 'arc', 'arcError', 'bufferable', 'entry', 'failing', 'loopDone', 'loopHasRoom', 'paused', 'pendingCommand', 'queued', 'routed', 'runEnded', 'unhandledFailure', 'unpaused']);
  });
});

describe('the machine answers "what happens if …"', () => {
  it('hello: if square fails, report is never entered and the execution fails, naming square', () => {
    const pb = hello();
    const d = new Driver(pb, inputOf({ workload: pb.workload }));
    d.completeOk(1);
    d.complete(2, { calc: err('overflow') });
    d.completeOk(3);
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toMatchObject({ message: 'item 0: overflow', step: 'square' });
    expect(records(d.all).filter((r) => r.eventType === 'step.enter').map((r) => r.step)).toEqual(['start', 'square']);
  });

  it('inclusive: two arcs into the same step both fire, giving two runs of it', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['twice', { step: 'twice', when: OK }] } },
      { step: 'twice', tool: shell('t') },
    ]);
    d.completeOk(1);
    expect(d.pendingSeqs()).toEqual([2, 3]);
    expect(Object.values(d.context.runs).map((r) => r.step)).toEqual(['twice', 'twice']);
    d.completeOk(2);
    expect(d.snapshot.value).toMatchObject({ running: { twice: 'active' } });
    d.completeOk(3);
    expect(d.value).toBe('completed');
  });

  it('a set failing to render fails the execution at that arc', () => {
    const d = Driver.of([{ step: 'start', tool: shell('a'), next: [{ step: 'b', set: { v: '{{ outcome.result.nosuch.deeper }}' } }] }, { step: 'b' }]);
    d.completeOk(1);
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toMatchObject({ code: 'template_error', step: 'start' });
    expect(d.context.finished?.error?.message).toContain('start.next[0].set');
  });

  it('routes are gone between events: the stored context holds none', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['b', 'c'] } },
      { step: 'b', tool: shell('b') },
      { step: 'c', next: 'd' },
      { step: 'd', tool: shell('d') },
    ]);
    d.completeOk(1);
    expect(d.context.routes).toEqual([]);
    expect(d.pendingSeqs()).toEqual([2, 3]);
  });
});

// A model-based walk over the arc kinds the other walk leaves out: exclusive arcs with set, a
// self-arc guarded by vars, a sequential loop, a step without tasks, a failure nothing handles.
describe('execution machine: model-based paths over every arc kind (xstate/graph)', () => {
  const doc: StepDoc[] = [
    { step: 'start', tool: shell('a'), next: [{ step: 'each', when: OK, set: { n: 0 } }, { step: 'tally', when: "{{ outcome.status == 'error' }}" }] },
    { step: 'each', loop: { in: [1, 2] }, tool: shell('e'), next: [{ step: 'each', when: "{{ outcome.status == 'ok' and vars.n < 1 }}", set: { n: '{{ vars.n + 1 }}' } }, { step: 'tally', when: OK }] },
    { step: 'tally', next: 'end' },
    { step: 'end', tool: shell('z') },
  ];
  const machine = createExecutionMachine(playbookOf(doc));
  const task: Record<string, string> = { start: 'a', each: 'e', end: 'z' };
  const events = (s: ExecutionSnapshot): ExecutionEvent[] => {
    if (s.status === 'done') return [];
    return Object.entries(s.context.pending).flatMap(([seqText, p]) => {
      const seq = numberOf(seqText);
      const t = task[s.context.runs[keyOf(p.run)].step];
      return [
        { type: 'command.completed', seq, tasks: { [t]: ok(seq) } },
        { type: 'command.completed', seq, tasks: { [t]: err('no') } },
      ] as ExecutionEvent[];
    });
  };
  it('reaches completed and failed; each loop pass takes its self-arc at most once; running always has work pending', () => {
    const paths = getShortestPaths(machine, { input: inputOf(), events, serializeState: (s) => JSON.stringify([s.value, s.context]), serializeEvent: (e) => JSON.stringify(e) });
    const ends = new Set(paths.map((p) => topStateOf(p.state.value)));
    expect([...ends].sort()).toEqual(['completed', 'failed', 'running']);
    for (const p of paths) {
      const c = p.state.context;
      expect(c.routes).toEqual([]);
      if (topStateOf(p.state.value) === 'running') expect(Object.keys(c.pending).length).toBeGreaterThan(0);
      else expect(c.finished?.status).toBe(topStateOf(p.state.value));
      expect(Number(c.vars.n ?? 0)).toBeLessThanOrEqual(1);
      if (topStateOf(p.state.value) === 'completed') expect(c.completedSteps).toContain('tally');
    }
    // The self-arc was taken on some path: `each` entered twice.
    expect(paths.some((p) => p.state.context.vars.n === 1)).toBe(true);
  });
});
