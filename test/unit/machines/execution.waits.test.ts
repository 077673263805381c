// The execution machine's waits, pause and resume (DESIGN.md "Waiting and control"), driven
// through the pure machine: which effects each event gives, and that a replay of the log folds to
// the same state.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { actionable, childTask, Driver, issued, playbookOf, records, recordTypes, shell } from './helpers.ts';
import { compileStatechart } from '../../../machines/playbook-statechart.ts';
import type { Effect } from '../../../machines/execution/types.ts';

type Wait = Extract<Effect, { type: 'wait' }>;
const waits = (effects: Effect[]): Wait[] => effects.filter((e): e is Wait => e.type === 'wait');

describe('timers', () => {
  it('a `for` wait is pending under a seq with no command; timer.fired moves on to the next step', () => {
    const d = Driver.of([
      { step: 'start', wait: { for: '30m' }, next: 'after' },
      { step: 'after', tool: [shell('a')] },
    ]);
    expect(waits(d.last)).toEqual([{ type: 'wait', seq: 1, step: 'start', kind: 'timer', signal: null, wakeAt: null, afterMs: 1_800_000, roles: null }]);
    expect(issued(d.last)).toEqual([]);
    expect(d.context.pending['#1']).toMatchObject({ kind: 'wait' });
    // A report for some other seq changes nothing.
    expect(d.send({ type: 'timer.fired', seq: 7 })).toEqual([]);
    const fired = d.send({ type: 'timer.fired', seq: 1 });
    expect(fired).toContainEqual({ type: 'endWaits', seqs: [1] });
    expect(issued(fired).map((c) => c.step)).toEqual(['after']);
    // Fired twice: the second finds nothing pending.
    expect(d.send({ type: 'timer.fired', seq: 1 })).toEqual([]);
  });

  it('`until` renders to a time; a value that is not one fails the step (wait_until)', () => {
    const at = Driver.of([{ step: 'start', wait: { until: '{{ workload.at }}' } }], { workload: { at: '2030-01-02T03:04:05+02:00' } });
    expect(waits(at.last)[0]).toMatchObject({ kind: 'timer', wakeAt: '2030-01-02T01:04:05.000Z', afterMs: null });
    const epoch = Driver.of([{ step: 'start', wait: { until: '{{ workload.at }}' } }], { workload: { at: 0 } });
    expect(waits(epoch.last)[0].wakeAt).toBe('1970-01-01T00:00:00.000Z');
    const last = Driver.of([{ step: 'start', wait: { until: '{{ workload.at }}' } }], { workload: { at: 253_402_300_799_999 } });
    expect(waits(last.last)[0].wakeAt).toBe('9999-12-31T23:59:59.999Z');
    // ISO 8601 as clients write it: a space for T, no seconds, a fraction, an offset without its colon.
    for (const [at, wakeAt] of [['2030-01-02 03:04+02:00', '2030-01-02T01:04:00.000Z'], ['2030-01-02T03:04:05.5z', '2030-01-02T03:04:05.500Z'], [' 2030-01-02T03:04:05-0130 ', '2030-01-02T04:34:05.000Z']]) {
      expect(waits(Driver.of([{ step: 'start', wait: { until: '{{ workload.at }}' } }], { workload: { at } }).last)[0].wakeAt).toBe(wakeAt);
    }
    // Not times the wait's row can hold: a day that is not (JavaScript would roll it over to
    // March, May), a year past 9999 (ISO text writes it +010000-…, which PostgreSQL refuses).
    const notTimes = ['2027-02-30T00:00:00Z', '2027-04-31T10:00:00+02:00', 253_402_300_800_000, '+275760-09-13T00:00:00Z', 8.64e15, -8.64e15];
    // Nor other ways of writing a time, which JavaScript reads (some wrongly: 1 February as 2 January, `12 Z` as 2001-12-01).
    const notIso = ['01.02.2026 10:00 +01:00', '1/2/2026 10:00 +01:00', '12 Z', 'Dec 1, 2026 06:00 -0500', '2026-12-01Z'];
    for (const bad of ['tomorrow', '2030-01-02T03:04:05', { t: 1 }, ...notTimes, ...notIso]) {
      const d = Driver.of([{ step: 'start', wait: { until: '{{ workload.at }}' } }], { workload: { at: bad } });
      expect(d.value).toBe('failed');
      expect(d.context.finished?.error).toMatchObject({ code: 'wait_until', step: 'start' });
    }
  });
});

const approval = [
  {
    step: 'start',
    wait: { signal: 'approval', timeout: '24h', approval: { roles: ['admin'] } },
    next: [
      { step: 'deploy', when: "{{ outcome.status == 'ok' and signal.payload.approved }}" },
      { step: 'expired', when: "{{ outcome.status == 'timeout' }}" },
      { step: 'rejected' },
    ],
  },
  { step: 'deploy', tool: [shell('deploy', { command: 'echo {{ steps.start.result.who }}' })] },
  { step: 'expired', tool: [shell('x')] },
  { step: 'rejected', tool: [shell('r')] },
];

describe('signals', () => {
  it('a signal ends the wait: its payload is the step result, the arcs read signal.payload and signal.by', () => {
    const d = Driver.of(approval);
    expect(waits(d.last)).toEqual([{ type: 'wait', seq: 1, step: 'start', kind: 'signal', signal: 'approval', wakeAt: null, afterMs: 86_400_000, roles: ['admin'] }]);
    // A signal under the wrong name changes nothing, even with the right seq.
    expect(d.send({ type: 'signal.received', seq: 1, signal: { name: 'other', payload: {}, by: 'x' } })).toEqual([]);
    const effects = d.send({ type: 'signal.received', seq: 1, signal: { name: 'approval', payload: { approved: true, who: 'ann' }, by: 'ann' } });
    expect(issued(effects).map((c) => c.step)).toEqual(['deploy']);
    expect(d.context.steps.start).toMatchObject({ status: 'ok', result: { approved: true, who: 'ann' }, signal: { name: 'approval', by: 'ann' } });
    const rejected = Driver.of(approval);
    rejected.send({ type: 'signal.received', seq: 1, signal: { name: 'approval', payload: { approved: false }, by: 'bob' } });
    expect(issued(rejected.all).map((c) => c.step)).toEqual(['rejected']);
  });

  it('a timeout makes the outcome `timeout`: its arc is taken; with no arc for it the execution fails (wait_timeout)', () => {
    const d = Driver.of(approval);
    d.send({ type: 'wait.timed_out', seq: 1 });
    expect(issued(d.all).map((c) => c.step)).toEqual(['expired']);
    const bare = Driver.of([{ step: 'start', wait: { signal: 'go', timeout: 10 }, next: 'after' }, { step: 'after', tool: [shell('a')] }]);
    bare.send({ type: 'wait.timed_out', seq: 1 });
    expect(bare.value).toBe('failed');
    expect(bare.context.finished?.error).toMatchObject({ code: 'wait_timeout', step: 'start' });
  });

  it('buffer: a signal sent before the step waits is kept and taken when it does', () => {
    const d = Driver.of([
      { step: 'start', tool: [shell('a')], next: 'gate' },
      { step: 'gate', wait: { signal: 'go', buffer: true }, next: [{ step: 'end', when: '{{ signal.payload.n == 2 }}' }] },
      { step: 'end', tool: [shell('e')] },
    ]);
    d.send({ type: 'signal.received', seq: null, signal: { name: 'go', payload: { n: 2 }, by: 'op' } });
    expect(d.context.signals.go).toHaveLength(1);
    const effects = d.completeOk(1);
    expect(waits(effects)).toEqual([]);
    expect(issued(effects).map((c) => c.step)).toEqual(['end']);
    expect(d.context.signals).toEqual({});
    // Without buffer: true nothing is kept.
    const unkept = Driver.of([{ step: 'start', tool: [shell('a')], next: 'gate' }, { step: 'gate', wait: { signal: 'go' } }]);
    expect(unkept.send({ type: 'signal.received', seq: null, signal: { name: 'go', payload: 1, by: 'op' } })).toEqual([]);
    expect(unkept.context.signals).toEqual({});
  });

  it("a wait that ends as it began (a kept signal taken, an `until` not a time) has no seq: its step.exit says so, the only record of its wait", () => {
    const exits = (effects: Effect[]) => records(effects).filter((r) => r.eventType === 'step.exit').map((r) => [r.step, r.context]);
    const d = Driver.of([
      { step: 'start', tool: [shell('a')], next: 'gate' },
      { step: 'gate', wait: { signal: 'go', buffer: true }, next: 'nap' },
      { step: 'nap', wait: { for: '1s' }, next: 'late' },
      { step: 'late', wait: { until: '{{ workload.at }}' } },
    ], { workload: { at: 'tomorrow' } });
    d.send({ type: 'signal.received', seq: null, signal: { name: 'go', payload: 1, by: 'op', role: 'operator' } });
    const taken = d.completeOk(1);
    expect(exits(taken)).toEqual([['start', { status: 'ok' }], ['gate', { status: 'ok', at_once: 'kept_signal' }]]);
    // The timer that waited took seq 2, as it did before: no seq is spent on a wait that never waited.
    expect(waits(taken)).toEqual([expect.objectContaining({ seq: 2, step: 'nap' })]);
    expect(exits(d.send({ type: 'timer.fired', seq: 2 }))).toEqual([['nap', { status: 'ok' }], ['late', { status: 'error', at_once: 'until_failed' }]]);
    expect(d.context.finished?.error).toMatchObject({ code: 'wait_until', step: 'late' });
  });
});

describe('kept signals and approval roles', () => {
  const steps = [
    { step: 'start', tool: [shell('a')], next: 'open' },
    { step: 'open', wait: { signal: 'go' }, next: 'admins' },
    { step: 'admins', wait: { signal: 'go', buffer: true, approval: { roles: ['admin'] } }, next: 'gate' },
    { step: 'gate', wait: { signal: 'go', buffer: true }, next: 'end' },
    { step: 'end', tool: [shell('e')] },
  ];

  it('a kept signal is taken only by a step that keeps signals and whose approval admits its sender', () => {
    const d = Driver.of(steps);
    d.send({ type: 'signal.received', seq: null, signal: { name: 'go', payload: { from: 'operator' }, by: 'op', role: 'operator' } });
    expect(d.context.signals.go).toHaveLength(1);
    // `open` keeps nothing (no buffer): it waits, the signal stays kept.
    const open = waits(d.completeOk(1));
    expect(open).toMatchObject([{ step: 'open', kind: 'signal' }]);
    expect(d.context.signals.go).toHaveLength(1);
    // `admins` keeps signals but takes them from admins only: it waits too.
    const admins = waits(d.send({ type: 'signal.received', seq: open[0].seq, signal: { name: 'go', payload: {}, by: 'root', role: 'admin' } }));
    expect(admins).toMatchObject([{ step: 'admins', kind: 'signal', roles: ['admin'] }]);
    expect(d.context.signals.go).toHaveLength(1);
    // `gate` (operators, buffer: true) takes it at once.
    const gate = d.send({ type: 'signal.received', seq: admins[0].seq, signal: { name: 'go', payload: {}, by: 'root', role: 'admin' } });
    expect(waits(gate)).toEqual([]);
    expect(issued(gate).map((c) => c.step)).toEqual(['end']);
    expect(d.context.signals).toEqual({});
  });

  it('a kept signal recorded without its sender\'s role (an older log) is taken by the next step that waits for it, as it was', () => {
    const d = Driver.of(steps);
    d.send({ type: 'signal.received', seq: null, signal: { name: 'go', payload: {}, by: 'op' } });
    const effects = d.completeOk(1);
    expect(waits(effects)).toMatchObject([{ step: 'admins' }]);
    expect(d.context.signals).toEqual({});
  });
});

describe('pause and resume', () => {
  it('while paused, commands are held (the ones out still finish); resume issues them in order', () => {
    const d = Driver.of([{ step: 'start', loop: { in: [1, 2, 3, 4], mode: 'parallel', max_in_flight: 2 }, tool: [shell('a')] }]);
    expect(issued(d.last).map((c) => c.seq)).toEqual([1, 2]);
    expect(d.send({ type: 'execution.paused' })).toEqual([]);
    expect(d.context.paused).toBe(true);
    const after = d.completeOk(1);
    expect(issued(after)).toEqual([]);
    expect(recordTypes(after)).toEqual(['loop.item']);
    d.completeOk(2);
    expect(d.context.held.map((e) => ('seq' in e ? e.seq : 0))).toEqual([3, 4]);
    // A second pause changes nothing.
    expect(d.send({ type: 'execution.paused' })).toEqual([]);
    const resumed = d.send({ type: 'execution.resumed' });
    expect(issued(resumed).map((c) => c.seq)).toEqual([3, 4]);
    expect(d.context.held).toEqual([]);
    d.completeOk(3);
    d.completeOk(4);
    expect(d.value).toBe('completed');
  });

  it('a cancel while paused drops what was held (never issued, never cancelled)', () => {
    const d = Driver.of([{ step: 'start', tool: [shell('a')], next: 'b' }, { step: 'b', tool: [shell('b')] }]);
    d.send({ type: 'execution.paused' });
    d.completeOk(1);
    const cancel = d.send({ type: 'execution.cancelled', reason: 'stop', cancelled_at: 'now' });
    expect(actionable(cancel).map((e) => e.type)).toEqual(['finish']);
  });
});

describe('cancel', () => {
  it("a cancel ends the execution's waits (their rows go: the timers never fire)", () => {
    const d = Driver.of([{ step: 'start', wait: { for: '1h' } }]);
    const cancel = d.send({ type: 'execution.cancelled', reason: 'stop', cancelled_at: 'now' });
    expect(actionable(cancel)).toEqual([{ type: 'endWaits', seqs: [1] }, { type: 'finish', finished: expect.objectContaining({ status: 'cancelled' }) }]);
    expect(d.send({ type: 'timer.fired', seq: 1 })).toEqual([]);
  });

  it('cascade false leaves the children running; by default they are cancelled', () => {
    const wf = [{ step: 'start', tool: [childTask('c', 'tests/child')] }];
    const cascade = Driver.of(wf);
    expect(actionable(cascade.send({ type: 'execution.cancelled', reason: 'x', cancelled_at: 'now' })).map((e) => e.type)).toEqual(['cancelChildren', 'finish']);
    const alone = Driver.of(wf);
    expect(actionable(alone.send({ type: 'execution.cancelled', reason: 'x', cancelled_at: 'now', cascade: false })).map((e) => e.type)).toEqual(['finish']);
  });
});

describe('the wait: block', () => {
  const problems = (step: Record<string, unknown>) => {
    const r = parsePlaybook(JSON.stringify({ apiVersion: 'svc/v1', metadata: { name: 't', path: 't/t' }, workflow: [{ step: 'start', ...step }] }));
    return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`);
  };
  it('waits for one thing, with timeout/approval/buffer only for a signal, and runs no tool', () => {
    expect(problems({ wait: { for: '1h30m' } })).toEqual([]);
    expect(problems({ wait: { signal: 'ok', timeout: 60, approval: { roles: ['operator'] }, buffer: true } })).toEqual([]);
    expect(problems({ wait: {} })).toEqual(['workflow[0].wait: must say what it waits for: for, until or signal']);
    expect(problems({ wait: { for: '1m', signal: 'x' } })).toEqual(['workflow[0].wait: must wait for one thing, not for and signal']);
    expect(problems({ wait: { for: '1m', timeout: '1m' } })).toEqual(['workflow[0].wait.timeout: applies only to a signal wait (wait.signal)']);
    expect(problems({ wait: { for: 'soon' } })).toEqual([expect.stringMatching(/^workflow\[0\]\.wait\.for: must be a duration/)]);
    expect(problems({ wait: { signal: 'x', approval: { roles: ['boss'] } } })).toEqual([expect.stringMatching(/^workflow\[0\]\.wait\.approval\.roles\[0\]/)]);
    expect(problems({ wait: { for: '1m' }, tool: shell('a') })).toEqual(['workflow[0].tool: a step that waits runs no tool: put the tool in the step after it']);
  });

  it('a loop needs a tool to run per item: a step with a loop and no tool is refused, not run as if it had none', () => {
    expect(problems({ loop: { in: '{{ [1, 2] }}', iterator: 'x' } })).toEqual(["workflow[0].loop: a loop runs the step's tool once per item: this step has no tool"]);
    expect(problems({ loop: { in: '{{ [1, 2] }}', iterator: 'x' }, tool: shell('a') })).toEqual([]);
  });

  it('the statechart names the wait in its node', () => {
    const pb = playbookOf(approval);
    expect(pb.workflow[0].wait).toEqual({ kind: 'signal', signal: 'approval', timeoutMs: 86_400_000, roles: ['admin'], buffer: false });
    const active = compileStatechart(pb).states.running.states?.start.states?.active;
    expect(active?.meta?.wait).toEqual(pb.workflow[0].wait);
    expect(active?.description).toContain('waits for signal approval from admin');
  });
});
