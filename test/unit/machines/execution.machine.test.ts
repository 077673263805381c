import { keyOf } from '../../../machines/execution/keys.ts';
import { describe, expect, it } from 'vitest';
import type { Effect, ExecutionEvent } from '../../../machines/execution/types.ts';
import {
  actionable,
  childStarts,
  childTask,
  Driver,
  err,
  inputOf,
  issued,
  ok,
  playbookOf,
  recordTypes,
  records,
  Rng,
  shell,
  type StepDoc,
} from './helpers.ts';

const OK = "{{ outcome.status == 'ok' }}";
const ERROR = "{{ outcome.status == 'error' }}";

const enteredSteps = (effects: Effect[]): string[] => records(effects).filter((r) => r.eventType === 'step.enter').map((r) => r.step ?? '');
const finishOf = (effects: Effect[]) => effects.find((e): e is Extract<Effect, { type: 'finish' }> => e.type === 'finish');

describe('execution machine: entry', () => {
  it('enters the step named start even when it is not first', () => {
    const d = Driver.of([{ step: 'prepare', tool: shell('p') }, { step: 'start', tool: shell('s') }]);
    expect(d.value).toBe('running');
    expect(enteredSteps(d.last)).toEqual(['start']);
    expect(issued(d.last).map((c) => c.step)).toEqual(['start']);
  });

  it('enters the first step when no step is named start', () => {
    const d = Driver.of([{ step: 'first', tool: shell('a') }, { step: 'second', tool: shell('b') }]);
    expect(enteredSteps(d.last)).toEqual(['first']);
    expect(d.last.map((e) => e.type)).toEqual(['record', 'issueCommand']);
    expect(d.context.pending).toEqual({ '#1': { run: 1, iteration: '-', kind: 'worker' } });
    expect(d.context.nextSeq).toBe(2);
  });

  it('a playbook of tool-less steps completes inside initialTransition', () => {
    const d = Driver.of([{ step: 'a', next: 'b' }, { step: 'b' }]);
    expect(d.value).toBe('completed');
    expect(enteredSteps(d.all)).toEqual(['a', 'b']);
    expect(finishOf(d.all)?.finished).toEqual({ status: 'completed', result: null, error: null });
  });
});

describe('execution machine: tasks of a step', () => {
  it('runs a task list as one command carrying every task in order', () => {
    const d = Driver.of([{ step: 'start', tool: [shell('one', { command: 'echo {{ workload.w }} {{ args.a }}' }), shell('two', { command: 'echo {{ vars | length }}' }), shell('three', { command: 'echo {{ steps | length }}' })] }], { workload: { w: 1 }, args: { a: 2 } });
    const cmds = issued(d.last);
    expect(cmds).toHaveLength(1);
    expect(cmds[0]).toMatchObject({ seq: 1, step: 'start', loopIndex: null, keychain: [] });
    expect(cmds[0].tasks.map((t) => t.name)).toEqual(['one', 'two', 'three']);
    expect(cmds[0].context).toEqual({
      workload: { w: 1 },
      args: { a: 2 },
      vars: {},
      steps: {},
      tasks: {},
      execution: { id: 101, path: 'tests/machine', catalog_id: 7, parent_id: null, root_id: 101 },
    });
  });

  it('a command carries only the context roots and steps its templates read', () => {
    const d = Driver.of(
      [
        { step: 'start', tool: shell('a'), next: 'mid' },
        { step: 'mid', tool: shell('m'), next: { mode: 'inclusive', arcs: [{ step: 'plain', set: { v: 1 } }, { step: 'reads', set: { w: 2 } }] } },
        { step: 'plain', tool: shell('p') },
        { step: 'reads', tool: [shell('r', { command: "echo {{ steps.start.result }} {{ steps['mid'].result }} {{ workload.w }}" })] },
      ],
      { workload: { w: 1, big: 'x'.repeat(100) }, args: { a: 2 } },
    );
    expect(issued(d.last)[0].context).toEqual({ tasks: {}, execution: { id: 101, path: 'tests/machine', catalog_id: 7, parent_id: null, root_id: 101 } });
    d.completeOk(1, 'A');
    const fx = d.completeOk(2, 'M');
    const plain = issued(fx).find((c) => c.step === 'plain')!;
    expect(Object.keys(plain.context).sort()).toEqual(['execution', 'tasks']);
    const reads = d.command(4);
    expect(reads.step).toBe('reads');
    expect(Object.keys(reads.context).sort()).toEqual(['execution', 'steps', 'tasks', 'workload']);
    expect(Object.keys(reads.context.steps as object).sort()).toEqual(['mid', 'start']);
    expect(reads.context.workload).toEqual({ w: 1, big: 'x'.repeat(100) });
  });

  it('a template that does not parse carries the whole context, so the worker reports its error', () => {
    // Registration refuses such a template now; a playbook stored before that still runs.
    const playbook = playbookOf([{ step: 'start', tool: shell('a') }]);
    Object.assign(playbook.workflow[0].tasks[0], { command: 'echo {{ workload.w' });
    const d = new Driver(playbook, inputOf({ workload: { w: 1 }, args: {} }));
    expect(Object.keys(issued(d.last)[0].context).sort()).toEqual(['args', 'execution', 'steps', 'tasks', 'vars', 'workload']);
  });

  it('accepts a single task object', () => {
    const d = Driver.of([{ step: 'start', tool: shell('only') }]);
    expect(issued(d.last)[0].tasks.map((t) => t.name)).toEqual(['only']);
  });

  it("a step's result is the last task's data; its tasks are kept by name", () => {
    const d = Driver.of([{ step: 'start', tool: [shell('a'), shell('b')] }]);
    d.complete(1, { a: ok({ x: 1 }), b: ok({ y: 2 }) });
    expect(d.context.steps.start).toEqual({ status: 'ok', result: { y: 2 }, error: null, tasks: { a: ok({ x: 1 }), b: ok({ y: 2 }) } });
    expect(d.value).toBe('completed');
    expect(d.context.finished).toEqual({ status: 'completed', result: { y: 2 }, error: null });
  });

  it('command.failed charges the error to the first task the worker did not report', () => {
    const d = Driver.of([{ step: 'start', tool: [shell('a'), shell('b'), shell('c')], next: [{ step: 'h', when: ERROR }] }, { step: 'h' }]);
    d.send({ type: 'command.failed', seq: 1, error: { message: 'lost', code: 'worker_lost' }, tasks: { a: ok(1) } });
    expect(d.context.steps.start).toEqual({
      status: 'error',
      result: null,
      error: { message: 'lost', code: 'worker_lost' },
      tasks: { a: ok(1), b: { status: 'error', data: null, error: { message: 'lost', code: 'worker_lost' } } },
    });
    expect(enteredSteps(d.last)).toEqual(['h']);
  });
});

describe('execution machine: next', () => {
  it('follows next given as a string', () => {
    const d = Driver.of([{ step: 'start', tool: shell('a'), next: 'b' }, { step: 'b', tool: shell('b', { command: 'echo {{ steps.start.result }}' }) }]);
    const fx = d.completeOk(1, 'A');
    expect(enteredSteps(fx)).toEqual(['b']);
    expect(issued(fx)).toMatchObject([{ seq: 2, step: 'b' }]);
    expect(issued(fx)[0].context.steps).toEqual({ start: { status: 'ok', result: 'A', error: null, tasks: { a: ok('A') } } });
  });

  it('a list is exclusive: the first arc whose when is true wins', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: [{ step: 'x', when: ERROR }, { step: 'y', when: OK }, { step: 'z', when: OK }, { step: 'w' }] },
      { step: 'x' }, { step: 'y', tool: shell('y') }, { step: 'z', tool: shell('z') }, { step: 'w', tool: shell('w') },
    ]);
    const fx = d.completeOk(1);
    expect(enteredSteps(fx)).toEqual(['y']);
    expect(d.pendingSeqs()).toEqual([2]);
  });

  it('mode exclusive written out behaves like a list', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'exclusive', arcs: [{ step: 'y' }, { step: 'z' }] } },
      { step: 'y', tool: shell('y') }, { step: 'z', tool: shell('z') },
    ]);
    expect(enteredSteps(d.completeOk(1))).toEqual(['y']);
  });

  it('inclusive: every matching arc fires, giving parallel branches', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: [{ step: 'b', when: OK }, { step: 'c', when: ERROR }, { step: 'd' }, 'e'] } },
      { step: 'b', tool: shell('b') }, { step: 'c', tool: shell('c') }, { step: 'd', tool: shell('d') }, { step: 'e', tool: shell('e') },
    ]);
    const fx = d.completeOk(1);
    expect(enteredSteps(fx)).toEqual(['b', 'd', 'e']);
    expect(issued(fx).map((c) => [c.seq, c.step])).toEqual([[2, 'b'], [3, 'd'], [4, 'e']]);
    expect(d.pendingSeqs()).toEqual([2, 3, 4]);
    expect(Object.values(d.context.runs).map((r) => r.step).sort()).toEqual(['b', 'd', 'e']);
  });

  it('arcs without when fire only when the step succeeded', () => {
    const doc: StepDoc[] = [
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['plain', { step: 'onerr', when: ERROR }] } },
      { step: 'plain', tool: shell('p') },
      { step: 'onerr', tool: shell('e') },
    ];
    const good = Driver.of(doc);
    expect(enteredSteps(good.completeOk(1))).toEqual(['plain']);
    const bad = Driver.of(doc);
    expect(enteredSteps(bad.complete(1, { a: err('nope') }))).toEqual(['onerr']);
    expect(bad.value).toBe('running');
  });

  it('set writes rendered (native) values into vars, only for arcs that fire', () => {
    const d = Driver.of([
      {
        step: 'start',
        tool: shell('a'),
        next: {
          mode: 'inclusive',
          arcs: [
            { step: 'b', when: ERROR, set: { never: true } },
            { step: 'b', when: OK, set: { count: '{{ outcome.result.n + 1 }}', label: 'n={{ outcome.result.n }}', list: '{{ outcome.result.items }}' } },
          ],
        },
      },
      { step: 'b', tool: shell('b', { command: 'echo {{ vars.count }}' }) },
    ]);
    const fx = d.completeOk(1, { n: 41, items: [1, 2] });
    expect(d.context.vars).toEqual({ count: 42, label: 'n=41', list: [1, 2] });
    expect(issued(fx)[0].context.vars).toEqual({ count: 42, label: 'n=41', list: [1, 2] });
  });

  it('arcs can test vars', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: [{ step: 'check', set: { go: '{{ outcome.result }}' } }] },
      { step: 'check', next: [{ step: 'yes', when: '{{ vars.go }}' }, { step: 'no', when: '{{ not vars.go }}' }] },
      { step: 'yes', tool: shell('y') }, { step: 'no', tool: shell('n') },
    ]);
    expect(enteredSteps(d.completeOk(1, false))).toEqual(['check', 'no']);
  });
});

describe('execution machine: failure', () => {
  it('a step in error with no matching arc fails the execution and cancels what is still in flight', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['left', 'right'] } },
      { step: 'left', tool: shell('l'), next: [{ step: 'recover', when: "{{ outcome.error.code == 'other' }}" }] },
      { step: 'right', tool: shell('r') },
      { step: 'recover' },
    ]);
    d.completeOk(1);
    expect(d.pendingSeqs()).toEqual([2, 3]);
    const fx = d.complete(2, { l: err('disk full', 'enospc') });
    expect(d.value).toBe('failed');
    const error = { message: 'disk full', code: 'enospc', step: 'left' };
    expect(actionable(fx)).toEqual([{ type: 'cancelCommands', seqs: [3] }, { type: 'finish', finished: { status: 'failed', result: null, error } }]);
    expect(recordTypes(fx)).toEqual(['step.exit', 'workflow.failed', 'playbook.failed']);
    expect(records(fx).slice(1)).toEqual([
      { type: 'record', eventType: 'workflow.failed', error },
      { type: 'record', eventType: 'playbook.failed', error },
    ]);
    // failed pair before finish
    expect(fx.map((e) => (e.type === 'record' ? e.eventType : e.type)).slice(-3)).toEqual(['workflow.failed', 'playbook.failed', 'finish']);
    expect(d.context.pending).toEqual({});
    expect(d.context.runs).toEqual({});
    expect(d.context.finished).toEqual({ status: 'failed', result: null, error });
  });

  it('a failure with only the failing command in flight cancels nothing', () => {
    const d = Driver.of([{ step: 'start', tool: shell('a') }]);
    const fx = d.complete(1, { a: err('x') });
    expect(fx.some((e) => e.type === 'cancelCommands' || e.type === 'cancelChildren')).toBe(false);
    expect(d.value).toBe('failed');
  });

  it('a branch with no arc simply ends while the others go on', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['short', 'long'] } },
      { step: 'short', tool: shell('s') },
      { step: 'long', tool: shell('l'), next: 'tail' },
      { step: 'tail', tool: shell('t') },
    ]);
    d.completeOk(1);
    const fx = d.completeOk(2, 'S');
    expect(actionable(fx)).toEqual([]);
    expect(recordTypes(fx)).toEqual(['step.exit']);
    expect(d.value).toBe('running');
    d.completeOk(3);
    expect(d.value).toBe('running');
    d.completeOk(4, 'T');
    expect(d.value).toBe('completed');
    expect(d.context.finished?.result).toBe('T');
  });
});

describe('execution machine: completion', () => {
  it('completes only when nothing runs and nothing is pending, with workflow.completed then playbook.completed', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['b', 'c'] } },
      { step: 'b', tool: shell('b') },
      { step: 'c', tool: shell('c') },
    ]);
    d.completeOk(1);
    const first = d.completeOk(3, 'C');
    expect(d.value).toBe('running');
    expect(finishOf(first)).toBeUndefined();
    expect(recordTypes(first)).not.toContain('workflow.completed');
    const last = d.completeOk(2, 'B');
    expect(d.value).toBe('completed');
    expect(last.map((e) => (e.type === 'record' ? e.eventType : e.type))).toEqual(['step.exit', 'workflow.completed', 'playbook.completed', 'finish']);
    expect(records(last).slice(1)).toEqual([
      { type: 'record', eventType: 'workflow.completed', result: 'B' },
      { type: 'record', eventType: 'playbook.completed', result: 'B' },
    ]);
    expect(finishOf(last)?.finished).toEqual({ status: 'completed', result: 'B', error: null });
  });

  it('a step error handled by an arc does not fail the execution', () => {
    const d = Driver.of([{ step: 'start', tool: shell('a'), next: [{ step: 'handled', when: ERROR }] }, { step: 'handled', tool: shell('h') }]);
    d.complete(1, { a: err('bad') });
    d.completeOk(2, 'fine');
    expect(d.value).toBe('completed');
    expect(d.context.steps.start.status).toBe('error');
  });
});

describe('execution machine: loops', () => {
  it('sequential: one command at a time, in item order, with the iterator and loop vars', () => {
    const d = Driver.of([{ step: 'start', loop: { in: '{{ workload.users }}', iterator: 'user' }, tool: shell('t') }], { workload: { users: ['ann', 'bob', 'cy'] } });
    const seen: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const cmds = issued(d.last);
      expect(cmds).toHaveLength(1);
      expect(d.pendingSeqs()).toHaveLength(1);
      const c = cmds[0];
      expect(c.loopIndex).toBe(i);
      expect(c.context.user).toBe(['ann', 'bob', 'cy'][i]);
      expect(c.context.loop).toEqual({ index: i, length: 3, first: i === 0, last: i === 2, item: c.context.user });
      seen.push(c.context.user);
      d.completeOk(c.seq, `done:${String(c.context.user)}`);
    }
    expect(seen).toEqual(['ann', 'bob', 'cy']);
    expect(d.value).toBe('completed');
    expect(d.context.steps.start.result).toEqual(['done:ann', 'done:bob', 'done:cy']);
    expect(recordTypes(d.all).filter((t) => t.startsWith('loop.'))).toEqual(['loop.item', 'loop.item', 'loop.item', 'loop.done']);
  });

  it('sequential: a failed item stops the loop; the step is in error', () => {
    const d = Driver.of([{ step: 'start', loop: { in: [1, 2, 3] }, tool: shell('t'), next: [{ step: 'h', when: ERROR }] }, { step: 'h' }]);
    d.completeOk(1, 'one');
    const fx = d.complete(2, { t: err('two broke', 'e2') });
    expect(issued(fx)).toEqual([]);
    expect(d.context.steps.start).toMatchObject({ status: 'error', result: ['one', null, null], error: { message: 'item 1: two broke', code: 'e2' } });
    expect(d.value).toBe('completed');
  });

  for (const seed of [1, 2, 3, 4, 5]) {
    it(`parallel, max_in_flight 3 over 20 items: never more than 3 pending, results in item order (seed ${seed})`, () => {
      const items = Array.from({ length: 20 }, (_, i) => `item${i}`);
      const d = Driver.of([{ step: 'start', loop: { in: items, mode: 'parallel', max_in_flight: 3 }, tool: shell('t') }]);
      const rng = new Rng(seed);
      const launched: number[] = [];
      const note = (fx: Effect[]) => launched.push(...issued(fx).map((c) => c.loopIndex ?? -1));
      note(d.last);
      expect(d.pendingSeqs()).toHaveLength(3);
      let maxPending = 0;
      while (d.value === 'running') {
        const pending = d.pendingSeqs();
        maxPending = Math.max(maxPending, pending.length);
        expect(pending.length).toBeLessThanOrEqual(3);
        const seq = rng.pick(pending);
        const c = d.command(seq);
        note(d.completeOk(seq, `r:${String(c.context.item)}`));
      }
      expect(maxPending).toBe(3);
      expect(launched).toEqual(items.map((_, i) => i));
      expect(d.value).toBe('completed');
      expect(d.context.steps.start.result).toEqual(items.map((i) => `r:${i}`));
    });
  }

  it('parallel without max_in_flight launches every item at once', () => {
    const d = Driver.of([{ step: 'start', loop: { in: [1, 2, 3, 4], mode: 'parallel' }, tool: shell('t') }]);
    expect(issued(d.last).map((c) => c.loopIndex)).toEqual([0, 1, 2, 3]);
  });

  it('parallel: a failed item lets the in-flight ones finish, launches no more, then the step fails', () => {
    const d = Driver.of([{ step: 'start', loop: { in: [0, 1, 2, 3, 4], mode: 'parallel', max_in_flight: 2 }, tool: shell('t') }]);
    expect(d.complete(1, { t: err('first broke') })).toSatisfy((fx: Effect[]) => issued(fx).length === 0);
    expect(d.value).toBe('running');
    d.completeOk(2, 'b');
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toEqual({ message: 'item 0: first broke', code: 'boom', step: 'start' });
  });

  it('loop.in that is not a list puts the step in error (code loop_input)', () => {
    const d = Driver.of([{ step: 'start', loop: { in: '{{ workload.users }}' }, tool: shell('t'), next: [{ step: 'h', when: ERROR }] }, { step: 'h', tool: shell('h') }], {
      workload: { users: { not: 'a list' } },
    });
    expect(d.context.steps.start).toEqual({ status: 'error', result: null, error: { message: 'start.loop.in must render to a list', code: 'loop_input' }, tasks: {} });
    expect(issued(d.last).map((c) => c.step)).toEqual(['h']);
  });

  it('loop.in not a list with no error arc fails the execution', () => {
    const d = Driver.of([{ step: 'start', loop: { in: '{{ "plain text" }}' }, tool: shell('t') }]);
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toMatchObject({ code: 'loop_input', step: 'start' });
    expect(issued(d.all)).toEqual([]);
  });

  it('loop.in that fails to render puts the step in error (template_error)', () => {
    const d = Driver.of([{ step: 'start', loop: { in: '{{ workload.missing_list }}' }, tool: shell('t') }]);
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toMatchObject({ code: 'template_error', step: 'start' });
  });

  it('an empty list is ok with result [] and follows next', () => {
    const d = Driver.of([{ step: 'start', loop: { in: '{{ workload.empty }}' }, tool: shell('t'), next: [{ step: 'after', when: OK }] }, { step: 'after', tool: shell('a') }], {
      workload: { empty: [] },
    });
    expect(d.context.steps.start).toEqual({ status: 'ok', result: [], error: null, tasks: {} });
    expect(records(d.last).find((r) => r.eventType === 'loop.done')?.context).toEqual({ count: 0 });
    expect(issued(d.last).map((c) => c.step)).toEqual(['after']);
  });

  it('loop.in can read a previous step result', () => {
    const d = Driver.of([{ step: 'start', tool: shell('list'), next: 'each' }, { step: 'each', loop: { in: '{{ steps.start.result }}', iterator: 'x', mode: 'parallel' }, tool: shell('t') }]);
    const fx = d.completeOk(1, [{ id: 1 }, { id: 2 }]);
    expect(issued(fx).map((c) => c.context.x)).toEqual([{ id: 1 }, { id: 2 }]);
  });
});

describe('execution machine: playbook tasks', () => {
  const doc = (next?: unknown): StepDoc[] => [
    { step: 'start', tool: childTask('sub', 'lib/{{ workload.which }}', { n: '{{ workload.n }}', label: 'n is {{ workload.n }}' }), ...(next ? { next } : {}) },
    { step: 'after', tool: shell('a') },
    { step: 'handler' },
  ];

  it('starts a child with rendered path and args instead of issuing a command', () => {
    const d = Driver.of(doc(), { workload: { which: 'child', n: 3 } });
    expect(issued(d.last)).toEqual([]);
    expect(childStarts(d.last)).toEqual([{ type: 'startChild', seq: 1, step: 'start', task: 'sub', path: 'lib/child', args: { n: 3, label: 'n is 3' } }]);
    expect(d.context.pending).toEqual({ '#1': { run: 1, iteration: '-', kind: 'child' } });
  });

  it('child.finished completed completes the step with the child outcome', () => {
    const d = Driver.of(doc('after'), { workload: { which: 'c', n: 1 } });
    const fx = d.childFinished(1, 'completed', { total: 9 }, 555);
    expect(d.context.steps.start).toEqual({
      status: 'ok',
      result: { execution_id: 555, status: 'completed', result: { total: 9 } },
      error: null,
      tasks: { sub: { status: 'ok', data: { execution_id: 555, status: 'completed', result: { total: 9 } } } },
    });
    expect(issued(fx).map((c) => c.step)).toEqual(['after']);
    d.completeOk(2);
    expect(d.value).toBe('completed');
  });

  it('child.finished failed puts the step in error and fails the execution without an arc', () => {
    const d = Driver.of(doc('after'), { workload: { which: 'c', n: 1 } });
    d.childFinished(1, 'failed');
    expect(d.context.steps.start).toMatchObject({ status: 'error', error: { message: 'child failed', code: 'child_failed' } });
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toEqual({ message: 'child failed', code: 'child_failed', step: 'start' });
  });

  it('child.finished failed follows an error arc when there is one', () => {
    const d = Driver.of(doc([{ step: 'handler', when: ERROR }]), { workload: { which: 'c', n: 1 } });
    d.send({ type: 'child.finished', seq: 1, child_execution_id: 8, status: 'cancelled', result: null, error: null });
    expect(d.context.steps.start.error).toEqual({ message: 'child execution cancelled', code: 'child_cancelled' });
    expect(d.value).toBe('completed');
  });

  it('a child path that renders to nothing is a task error, not a start', () => {
    const d = Driver.of([{ step: 'start', tool: childTask('sub', '{{ workload.missing }}') }]);
    expect(childStarts(d.all)).toEqual([]);
    expect(d.value).toBe('failed');
    expect(d.context.steps.start.tasks.sub).toMatchObject({ status: 'error', error: { message: "template error in start.sub.path: 'workload.missing' is undefined: 'workload' has no attribute 'missing'" } });
  });

  it('[shell, playbook, shell] runs three segments in order, each seeing the earlier tasks', () => {
    const d = Driver.of([
      { step: 'start', tool: [shell('before'), childTask('sub', 'lib/child', { got: '{{ tasks.before.data }}' }), shell('after')] },
    ]);
    expect(d.last.map((e) => e.type)).toEqual(['record', 'issueCommand']);
    expect(issued(d.last)[0].tasks.map((t) => t.name)).toEqual(['before']);

    const second = d.complete(1, { before: ok('B') });
    expect(issued(second)).toEqual([]);
    expect(childStarts(second)).toEqual([{ type: 'startChild', seq: 2, step: 'start', task: 'sub', path: 'lib/child', args: { got: 'B' } }]);
    expect(recordTypes(second)).toEqual([]);

    const third = d.childFinished(2, 'completed', 'C', 77);
    const cmd = issued(third);
    expect(cmd).toHaveLength(1);
    expect(cmd[0]).toMatchObject({ seq: 3, step: 'start' });
    expect(cmd[0].tasks.map((t) => t.name)).toEqual(['after']);
    expect(Object.keys(cmd[0].context.tasks as object)).toEqual(['before', 'sub']);

    d.complete(3, { after: ok('D') });
    expect(d.value).toBe('completed');
    expect(Object.keys(d.context.steps.start.tasks)).toEqual(['before', 'sub', 'after']);
    expect(d.context.steps.start.result).toBe('D');
  });

  it('a failing first segment stops the step before the child starts', () => {
    const d = Driver.of([{ step: 'start', tool: [shell('before'), childTask('sub', 'lib/child'), shell('after')] }]);
    const fx = d.complete(1, { before: err('no') });
    expect(childStarts(fx)).toEqual([]);
    expect(d.value).toBe('failed');
  });
});

describe('execution machine: cancel', () => {
  it('execution.cancelled cancels commands and children and ends cancelled', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['w1', 'w2', 'kid'] } },
      { step: 'w1', tool: shell('w') }, { step: 'w2', tool: shell('w') }, { step: 'kid', tool: childTask('k', 'lib/k') },
    ]);
    d.completeOk(1);
    expect(d.pendingSeqs()).toEqual([2, 3, 4]);
    const fx = d.send({ type: 'execution.cancelled', reason: 'user asked', cancelled_at: '2024-01-01T00:00:00Z' });
    expect(d.value).toBe('cancelled');
    const finished = { status: 'cancelled', result: null, error: { message: 'user asked', code: 'cancelled' } };
    expect(fx).toEqual([{ type: 'cancelCommands', seqs: [2, 3] }, { type: 'cancelChildren' }, { type: 'finish', finished }]);
    expect(d.context.pending).toEqual({});
    expect(d.context.runs).toEqual({});
    expect(d.context.finished).toEqual(finished);
  });

  it('execution.cancelled with only a worker command in flight does not ask to cancel children', () => {
    const d = Driver.of([{ step: 'start', tool: shell('a') }]);
    expect(d.send({ type: 'execution.cancelled', reason: 'r', cancelled_at: '' }).map((e) => e.type)).toEqual(['cancelCommands', 'finish']);
  });
});

describe('execution machine: events that change nothing', () => {
  const twoBranches: StepDoc[] = [
    { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: ['b', 'c'] } },
    { step: 'b', tool: shell('b') },
    { step: 'c', tool: childTask('k', 'lib/k') },
  ];

  it('events for unknown seqs (and seqs already done) change nothing', () => {
    const d = Driver.of(twoBranches);
    d.completeOk(1);
    const before = structuredClone({ value: d.value, context: d.context });
    const events: ExecutionEvent[] = [
      { type: 'command.completed', seq: 99, tasks: { x: ok() } },
      { type: 'command.completed', seq: 1, tasks: { a: ok('again') } },
      { type: 'command.failed', seq: 1, error: { message: 'late' } },
      { type: 'command.failed', seq: -1, error: { message: 'no seq' } },
      { type: 'child.finished', seq: 42, child_execution_id: 1, status: 'completed', result: null, error: null },
      { type: 'child.finished', seq: 1, child_execution_id: 1, status: 'failed', result: null, error: null },
    ];
    for (const ev of events) {
      expect(d.send(ev), JSON.stringify(ev)).toEqual([]);
      expect({ value: d.value, context: d.context }).toEqual(before);
    }
  });

  for (const ending of ['completed', 'failed', 'cancelled'] as const) {
    it(`events after the execution ${ending} change nothing`, () => {
      const d = Driver.of(twoBranches);
      d.completeOk(1);
      if (ending === 'completed') {
        d.completeOk(2);
        d.childFinished(3, 'completed');
      } else if (ending === 'failed') d.complete(2, { b: err('x') });
      else d.send({ type: 'execution.cancelled', reason: 'r', cancelled_at: '' });
      expect(d.value).toBe(ending);
      const snapshot = d.snapshot;
      const before = structuredClone({ value: d.value, context: d.context });
      const events: ExecutionEvent[] = [
        { type: 'command.completed', seq: 2, tasks: { b: ok() } },
        { type: 'command.failed', seq: 2, error: { message: 'x' } },
        { type: 'child.finished', seq: 3, child_execution_id: 9, status: 'completed', result: 1, error: null },
        { type: 'execution.cancelled', reason: 'again', cancelled_at: '' },
      ];
      for (const ev of events) {
        expect(d.send(ev), ev.type).toEqual([]);
        expect({ value: d.value, context: d.context }).toEqual(before);
        expect(d.snapshot.status).toBe('done');
      }
      expect(d.snapshot.context).toEqual(snapshot.context);
    });
  }
});

describe('execution machine: steps without tools', () => {
  it('a cycle of tool-less steps fails with step_cycle instead of hanging', () => {
    const d = Driver.of([{ step: 'start', tool: shell('a'), next: 'ping' }, { step: 'ping', next: 'pong' }, { step: 'pong', next: 'ping' }]);
    const fx = d.completeOk(1);
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toMatchObject({ code: 'step_cycle' });
    expect(finishOf(fx)?.finished.status).toBe('failed');
    expect(issued(fx)).toEqual([]);
  });

  it('a self-loop at entry fails with step_cycle from initialTransition', () => {
    const d = Driver.of([{ step: 'start', next: 'start' }]);
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error?.code).toBe('step_cycle');
  });

  it('a bounded tool-less loop over vars is not a cycle', () => {
    const d = Driver.of([
      { step: 'start', next: [{ step: 'count', set: { n: 0 } }] },
      { step: 'count', next: [{ step: 'count', when: '{{ vars.n < 5 }}', set: { n: '{{ vars.n + 1 }}' } }, { step: 'done', when: '{{ vars.n >= 5 }}' }] },
      { step: 'done' },
    ]);
    expect(d.value).toBe('completed');
    expect(d.context.vars).toEqual({ n: 5 });
  });
});

describe('execution machine: completedSteps (progress)', () => {
  it('lists each step once, in the order steps first completed, errors handled by arcs included', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: 'mid' },
      { step: 'mid', tool: shell('m'), next: [{ step: 'start', when: '{{ not vars.again | default(false) }}', set: { again: true } }, { step: 'last', when: '{{ vars.again | default(false) }}' }] },
      { step: 'last', tool: shell('l'), next: [{ step: 'cleanup', when: ERROR }] },
      { step: 'cleanup' },
      { step: 'unused', tool: shell('u') },
    ]);
    expect(d.context.completedSteps).toEqual([]);
    d.completeOk(1);
    expect(d.context.completedSteps).toEqual(['start']);
    d.completeOk(2);
    expect(d.context.completedSteps).toEqual(['start', 'mid']);
    d.completeOk(3);
    d.completeOk(4);
    expect(d.context.completedSteps).toEqual(['start', 'mid']);
    d.complete(5, { l: err('x') });
    expect(d.context.completedSteps).toEqual(['start', 'mid', 'last', 'cleanup']);
    expect(d.value).toBe('completed');
  });

  it('a looped step counts once, when the whole loop is done', () => {
    const d = Driver.of([{ step: 'start', loop: { in: [1, 2] }, tool: shell('t') }]);
    d.completeOk(1);
    expect(d.context.completedSteps).toEqual([]);
    d.completeOk(2);
    expect(d.context.completedSteps).toEqual(['start']);
  });
});

describe('execution machine: purity', () => {
  it('transition() never changes the snapshot it was given', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: { mode: 'inclusive', arcs: [{ step: 'l', set: { x: 1 } }, 'm'] } },
      { step: 'l', loop: { in: [1, 2, 3], mode: 'parallel', max_in_flight: 2 }, tool: shell('t') },
      { step: 'm', tool: [shell('a'), childTask('k', 'lib/k'), shell('b')] },
    ]);
    const rng = new Rng(11);
    let transitions = 0;
    while (d.value === 'running') {
      const pending = d.context.pending;
      const seq = rng.pick(d.pendingSeqs());
      const snap = d.snapshot;
      const frozen = structuredClone(snap.context);
      if (pending[keyOf(seq)].kind === 'child') d.childFinished(seq, 'completed');
      else d.completeOk(seq);
      expect(snap.context).toEqual(frozen);
      transitions++;
    }
    expect(transitions).toBe(7);
    expect(d.value).toBe('completed');
  });
});

// ---------------------------------------------------------------------------------------------
// Regressions: bugs these tests found in the machine.

describe('execution machine: regressions', () => {
  // A playbook task whose path or args fail to render finishes its iteration inside fillLoop();
  // the loop must then see that (one writable copy of the run per transition) and stop.
  it('a parallel loop whose first child path fails to render starts no children after the step ended', () => {
    const d = Driver.of([
      { step: 'start', loop: { in: [{}, { p: 'a' }, { p: 'b' }], mode: 'parallel', max_in_flight: 3 }, tool: childTask('c', '{{ item.p }}') },
    ]);
    const exitAt = d.all.findIndex((e) => e.type === 'record' && e.eventType === 'step.exit');
    expect(exitAt).toBeGreaterThan(-1);
    expect(d.all.slice(exitAt).filter((e) => e.type === 'startChild' || (e.type === 'record' && e.eventType === 'loop.item'))).toEqual([]);
    expect(d.value).toBe('failed');
  });

  it('a parallel loop of playbook tasks with one unrenderable path still finishes when the other children do', () => {
    const d = Driver.of([
      {
        step: 'start',
        loop: { in: [{ p: 'z' }, {}, { p: 'a' }, { p: 'b' }], mode: 'parallel', max_in_flight: 4 },
        tool: childTask('c', '{{ item.p }}'),
        next: [{ step: 'recover', when: ERROR }],
      },
      { step: 'recover' },
    ]);
    // Every child that was started must be answerable, and the loop must end in error once they are.
    for (const s of childStarts(d.all)) {
      if (d.value !== 'running') break;
      expect(() => d.childFinished(s.seq, 'completed', s.path)).not.toThrow();
    }
    expect(d.value).toBe('completed');
    expect(d.context.steps.start).toMatchObject({ status: 'error', error: { message: "item 1: template error in start.c.path: 'item.p' is undefined: 'item' has no attribute 'p'" } });
    expect(new Set(childStarts(d.all).map((s) => s.path)).size).toBe(childStarts(d.all).length);
  });

  // Issued commands hold references to vars and steps; completeRun() must replace them, not
  // change them in place, or a command's context changes after it was issued.
  it("an issued command's context is what its step saw: a later set in the same transition does not change it", () => {
    const d = Driver.of([
      { step: 'start', next: { mode: 'inclusive', arcs: ['work', 'setter'] } },
      { step: 'work', tool: shell('w', { command: 'echo {{ vars.mode }} {{ steps | length }}' }) },
      { step: 'setter', next: [{ step: 'fin', set: { mode: 'late' } }] },
      { step: 'fin' },
    ]);
    expect(d.context.vars).toEqual({ mode: 'late' });
    const cmd = d.command(1);
    expect(cmd.step).toBe('work');
    expect(cmd.context.vars).toEqual({});
    expect(Object.keys(cmd.context.steps as object)).toEqual(['start']);
  });
});

describe('execution machine: arc errors', () => {
  it('a `when` that fails to render fails the execution with a message naming the step and arc', () => {
    const d = Driver.of([
      { step: 'start', tool: shell('a'), next: [{ step: 'b', when: '{{ outcome.result.nosuch.deeper }}' }] },
      { step: 'b' },
    ]);
    d.completeOk(1);
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error?.message).toContain('start.next[0].when');
    expect(d.context.finished?.error).toMatchObject({ code: 'template_error', step: 'start' });
  });
});
