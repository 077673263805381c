import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { compileStatechart, type StateNodeJson, type TransitionJson } from '../../../machines/playbook-statechart.ts';
import { executionView } from '../../../machines/execution-view.ts';
import { stepPhase } from '../../../machines/execution/step-phase.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { childTask, Driver, err, inputOf, playbookOf, shell, type StepDoc } from './helpers.ts';

// The compiled statechart of a playbook: its JSON (what Stately's editor imports) shows every
// step, arc, loop, child playbook, retry and end state; the runtime machine built on it moves
// the step regions as the execution goes (the state value names the active steps).

const OK = "{{ outcome.status == 'ok' }}";
const ERROR = "{{ outcome.status == 'error' }}";

const hello = () => {
  const parsed = parsePlaybook(readFileSync(new URL('../../../examples/hello.yaml', import.meta.url), 'utf8'));
  if (!parsed.ok) throw new Error('examples/hello.yaml does not parse');
  return parsed.playbook;
};
const regions = (chart: StateNodeJson) => chart.states!.running.states!;
const always = (node: StateNodeJson | undefined): TransitionJson[] => node?.always ?? [];
// Where each step is, read as the GUI and the API read it (machines/execution/step-phase.ts):
// the step's state in the value, else where its last run left it.
const regionsOf = (d: Driver): Record<string, string> => {
  if (typeof d.snapshot.value === 'string') return {};
  return Object.fromEntries(d.playbook.workflow.map((s) => [s.step, stepPhase(d.snapshot, s.step)]));
};

describe('compiled statechart (JSON)', () => {
  it('examples/hello.yaml: one step at a time, so a sequence of step states with meta.step, the arc with its when, the loop, the end states', () => {
    const chart = compileStatechart(hello());
    expect(chart.id).toBe('execution');
    expect(chart.initial).toBe('running');
    expect(Object.keys(chart.states)).toEqual(['running', 'completed', 'failed', 'cancelled']);
    expect(chart.states.completed.type).toBe('final');
    expect(chart.states.running.type).toBeUndefined();
    expect(chart.states.running.initial).toBe('start');
    expect(chart.states.running.on?.['execution.cancelled']).toMatchObject({ target: 'cancelled' });
    const r = regions(chart);
    expect(Object.keys(r)).toEqual(['start', 'square', 'report']);
    for (const name of ['start', 'square', 'report']) expect(r[name].meta?.step).toBe(name);
    // start is the entry; start → square (no when: fires on success); square → report when ok.
    expect(always(r.start.states!.idle)[0]).toMatchObject({ target: 'active', meta: { entry: true } });
    expect(r.square.states).not.toHaveProperty('idle');
    expect(always(r.start)[0]).toMatchObject({ target: `#${r.square.id}.active`, meta: { from: 'start' } });
    expect(always(r.start)[0].meta).not.toHaveProperty('when');
    expect(always(r.square)[0]).toMatchObject({ target: `#${r.report.id}.active`, meta: { from: 'square', when: OK } });
    expect(r.square.states!.active.states!.iterating.meta).toEqual({ loop: { in: '{{ workload.numbers }}', iterator: 'n', mode: 'parallel', max_in_flight: 2 } });
    // Plain JSON that xstate (and so Stately's editor) takes as a machine config.
    const json = JSON.parse(JSON.stringify(chart));
    expect(json).toEqual(chart);
    expect(() => createMachine(json)).not.toThrow();
  });

  it('an inclusive fork of two arcs: one region per step, each entered by the arcs into it', () => {
    const chart = compileStatechart(
      playbookOf([
        { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: [{ step: 'x', when: OK }, 'y'] } },
        { step: 'x', tool: shell('x'), next: [{ step: 'z', when: OK }] },
        { step: 'y', tool: shell('y') },
        { step: 'z', tool: shell('z') },
      ]),
    );
    expect(chart.states.running.type).toBe('parallel');
    const r = regions(chart);
    expect(Object.keys(r)).toEqual(['start', 'x', 'y', 'z']);
    for (const name of Object.keys(r)) expect(r[name].meta?.step).toBe(name);
    expect(always(r.start.states!.idle)[0]).toMatchObject({ target: 'active', meta: { entry: true } });
    expect(always(r.y.states!.idle)[0]).toMatchObject({ target: 'active', meta: { from: 'start', fork: 'inclusive' } });
    expect(always(r.y.states!.idle)[0].meta).not.toHaveProperty('when');
    expect(always(r.z.states!.idle)[0]).toMatchObject({ target: 'active', meta: { from: 'x', when: OK } });
    const json = JSON.parse(JSON.stringify(chart));
    expect(() => createMachine(json)).not.toThrow();
  });

  it('shows inclusive forks, children, retries, and steps with no arc into them', () => {
    const chart = compileStatechart(
      playbookOf([
        { step: 'start', tool: shell('a', { retry: { attempts: 3 } }), next: { mode: 'inclusive', arcs: [{ step: 'x', when: OK }, { step: 'y', when: ERROR }] } },
        { step: 'x', tool: childTask('c', 'lib/child') },
        { step: 'y', tool: shell('y') },
        { step: 'orphan', tool: shell('o') },
      ]),
    );
    const r = regions(chart);
    expect(r.start.meta).toMatchObject({ next: 'inclusive', tasks: [{ name: 'a', kind: 'shell', retry: { attempts: 3 } }] });
    expect(r.start.states!.active.meta).toMatchObject({ retries: ['a up to 3 attempts'] });
    expect(always(r.y.states!.idle)[0]).toMatchObject({ meta: { from: 'start', when: ERROR, fork: 'inclusive' } });
    expect(r.x.states!.active.meta).toMatchObject({ children: [{ task: 'c', path: 'lib/child' }] });
    expect(r.x.states!.active.description).toContain('child.finished');
    // orphan: nothing enters it (only its outcome transitions).
    expect(always(r.orphan.states!.idle).filter((t) => t.target === 'active')).toEqual([]);
  });
});

describe('runtime machine: step regions follow the execution', () => {
  it('hello: start active, then the parallel loop with two in flight, then report, then completed', () => {
    const pb = hello();
    const d = new Driver(pb, inputOf({ workload: pb.workload }));
    expect(regionsOf(d)).toEqual({ start: 'active', square: 'idle', report: 'idle' });
    d.completeOk(1);
    expect(regionsOf(d)).toEqual({ start: 'completed', square: 'active', report: 'idle' });
    const view = executionView(d.playbook, d.snapshot, null);
    expect(view.active_steps).toEqual(['square']);
    expect(view.steps.square).toMatchObject({ status: 'active', loop: { length: 3, done: 0, in_flight: 2, mode: 'parallel', max_in_flight: 2 } });
    expect(view.steps.report.status).toBe('pending');
    for (const seq of [2, 3, 4]) d.completeOk(seq);
    expect(regionsOf(d)).toEqual({ start: 'completed', square: 'completed', report: 'active' });
    d.completeOk(5);
    expect(d.snapshot.value).toBe('completed');
  });

  it('exclusive fork: only the first arc that holds enters its step; a failure handled by an arc', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: [{ step: 'good', when: OK }, { step: 'bad', when: ERROR }] },
      { step: 'good', tool: shell('g') },
      { step: 'bad', tool: shell('b') },
    ]);
    d.complete(1, { a: err('no') });
    expect(regionsOf(d)).toEqual({ start: 'failed', good: 'idle', bad: 'active' });
    d.completeOk(2);
    expect(d.value).toBe('completed');
  });

  it('a 40-step chain: the state value names only the running step, however long the chain', () => {
    const d = Driver.of(Array.from({ length: 40 }, (_, i) => ({ step: i === 0 ? 'start' : `s${i}`, tool: shell(`t${i}`), ...(i < 39 ? { next: `s${i + 1}` } : {}) })));
    expect(d.snapshot.value).toEqual({ running: { start: 'active' } });
    for (let seq = 1; seq <= 20; seq++) d.completeOk(seq);
    expect(d.snapshot.value).toEqual({ running: { s20: 'active' } });
    expect(regionsOf(d)).toMatchObject({ start: 'completed', s19: 'completed', s20: 'active', s21: 'idle', s39: 'idle' });
    for (let seq = 21; seq <= 40; seq++) d.completeOk(seq);
    expect(d.snapshot.value).toBe('completed');
  });

  it('inclusive fork: both branches active at once', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['b', 'c'] } },
      { step: 'b', tool: shell('b') },
      { step: 'c', tool: shell('c') },
    ]);
    d.completeOk(1);
    expect(regionsOf(d)).toEqual({ start: 'completed', b: 'active', c: 'active' });
  });

  it('sequential loop: one item in flight; a cycle re-enters a step', () => {
    const doc: StepDoc[] = [
      { step: 'start', loop: { in: [1, 2, 3] }, tool: shell('i'), next: [{ step: 'again', when: '{{ (vars.n | default(0)) < 1 }}', set: { n: 1 } }] },
      { step: 'again', tool: shell('x'), next: 'start' },
    ];
    const d = Driver.of(doc);
    expect(executionView(d.playbook, d.snapshot, null).steps.start.loop).toMatchObject({ length: 3, in_flight: 1, mode: 'sequential' });
    for (const seq of [1, 2, 3]) d.completeOk(seq);
    expect(regionsOf(d)).toEqual({ start: 'completed', again: 'active' });
    d.completeOk(4);
    expect(regionsOf(d)).toEqual({ start: 'active', again: 'completed' });
  });

  it('child playbook: the step waits for child.finished; cancellation ends in cancelled and names the cut steps', () => {
    const d = Driver.of([{ step: 'start', tool: childTask('c', 'lib/c') }]);
    expect(regionsOf(d)).toEqual({ start: 'active' });
    const before = d.snapshot;
    d.send({ type: 'execution.cancelled', reason: 'test', cancelled_at: '2026-01-01T00:00:00Z' });
    expect(d.snapshot.value).toBe('cancelled');
    expect(executionView(d.playbook, d.snapshot, before).steps.start.status).toBe('cancelled');
  });

  it('a failure nothing handles ends in failed; steps never entered are skipped', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: 'later' },
      { step: 'later', tool: shell('l') },
    ]);
    const before = d.snapshot;
    d.complete(1, { a: err('no') });
    expect(d.snapshot.value).toBe('failed');
    const view = executionView(d.playbook, d.snapshot, before);
    expect(view.steps).toMatchObject({ start: { status: 'failed', outcome: { status: 'error', error: { message: 'no' } } }, later: { status: 'skipped' } });
  });
});
