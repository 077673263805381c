// A `playbook` task's `timeout_seconds` and `retry`, driven through the pure machine: the timeout
// is a durable timer set with the child's start (held with it while paused) and ended by the
// child's end; when it fires the one child is cancelled and the attempt fails with code
// `timeout`. A failed attempt with attempts left starts a new child after the worker's delay
// (a timer too; at once when it is 0), `retry.when` deciding as on a worker.
import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../../src/dsl/retry-delay-ms.ts';
import type { Effect } from '../../../machines/execution/types.ts';
import { actionable, childStarts, childTask, Driver } from './helpers.ts';
import { playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';

type Wait = Extract<Effect, { type: 'wait' }>;
const waits = (effects: Effect[]): Wait[] => effects.filter((e): e is Wait => e.type === 'wait');
const kid = (extra: Record<string, unknown>) => ({ ...childTask('kid', 'lib/child'), ...extra });

describe('timeout_seconds', () => {
  it('sets a timer with the child; when it fires first the child is cancelled and the step fails with code timeout', () => {
    const d = Driver.of([{ step: 'start', tool: [kid({ timeout_seconds: 1.5 })] }]);
    expect(childStarts(d.last)).toEqual([{ type: 'startChild', seq: 1, step: 'start', task: 'kid', path: 'lib/child', args: {} }]);
    expect(waits(d.last)).toEqual([{ type: 'wait', seq: 2, step: 'start', kind: 'timer', signal: null, wakeAt: null, afterMs: 1500, roles: null, purpose: { task: 'kid', for: 'timeout', attempt: 1 } }]);
    const fired = d.send({ type: 'timer.fired', seq: 2 });
    expect(fired).toContainEqual({ type: 'endWaits', seqs: [2] });
    expect(fired).toContainEqual({ type: 'cancelChild', seq: 1, reason: expect.stringMatching(/^playbook task start\.kid: its child did not end within timeout_seconds \(1\.5 s\); cancelled by parent execution 101$/) });
    // The child is no longer waited for: the step failed, and no cancelChildren cancels it twice.
    expect(fired.some((e) => e.type === 'cancelChildren')).toBe(false);
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toMatchObject({ code: 'timeout', step: 'start' });
    expect(d.context.steps.start.tasks.kid).toMatchObject({ status: 'error', data: null, error: { code: 'timeout' } });
    // The cancelled child's end comes later: nothing waits for it any more.
    expect(d.childFinished(1, 'cancelled')).toEqual([]);
  });

  it('a child that ends first ends the timer; the timer firing later changes nothing', () => {
    const d = Driver.of([{ step: 'start', tool: [kid({ timeout_seconds: '{{ workload.t }}' })] }], { workload: { t: 60 } });
    expect(waits(d.last)[0]).toMatchObject({ seq: 2, afterMs: 60_000 });
    const done = d.childFinished(1, 'completed', { x: 1 });
    expect(done).toContainEqual({ type: 'endWaits', seqs: [2] });
    expect(d.value).toBe('completed');
    expect(d.send({ type: 'timer.fired', seq: 2 })).toEqual([]);
  });

  it('a timeout that renders to no number > 0 fails the task as a worker would (invalid_task), starting nothing', () => {
    for (const t of ['soon', 0, -1, false]) {
      const d = Driver.of([{ step: 'start', tool: [kid({ timeout_seconds: '{{ workload.t }}', retry: { attempts: 3 } })] }], { workload: { t } });
      expect(actionable(d.all).filter((e) => e.type !== 'finish')).toEqual([]);
      expect(d.context.finished?.error).toEqual({ code: 'invalid_task', message: 'invalid playbook task: timeout_seconds: expected a number > 0', step: 'start' });
    }
  });

  it('while paused the timer is held with the start; resume issues both; a cancel while paused drops both', () => {
    const d = Driver.of([{ step: 'a', wait: { for: '1s' }, next: 'b' }, { step: 'b', tool: [kid({ timeout_seconds: 5 })] }]);
    d.send({ type: 'execution.paused' });
    const fired = d.send({ type: 'timer.fired', seq: 1 });
    expect(childStarts(fired)).toEqual([]);
    expect(waits(fired)).toEqual([]);
    expect(d.context.held.map((e) => e.type)).toEqual(['startChild', 'wait']);
    const resumed = d.send({ type: 'execution.resumed' });
    expect(resumed.map((e) => e.type)).toEqual(['startChild', 'wait']);

    const c = Driver.of([{ step: 'a', wait: { for: '1s' }, next: 'b' }, { step: 'b', tool: [kid({ timeout_seconds: 5 })] }]);
    c.send({ type: 'execution.paused' });
    c.send({ type: 'timer.fired', seq: 1 });
    const cancelled = c.send({ type: 'execution.cancelled', reason: 'stop', cancelled_at: '2026-01-01T00:00:00Z' });
    expect(actionable(cancelled).map((e) => e.type)).toEqual(['finish']);
  });
});

describe('retry', () => {
  it('a failed child with attempts left starts a new one after the worker\'s delay (a timer), attempt by attempt', () => {
    const retry = { attempts: 3, delay_seconds: 0.2, backoff: 2 };
    const d = Driver.of([{ step: 'start', tool: [kid({ retry })] }]);
    const first = d.childFinished(1, 'failed');
    expect(waits(first)).toEqual([{ type: 'wait', seq: 2, step: 'start', kind: 'timer', signal: null, wakeAt: null, afterMs: retryDelayMs(retry, 1), roles: null, purpose: { task: 'kid', for: 'retry', attempt: 2 } }]);
    expect(retryDelayMs(retry, 1)).toBe(200);
    expect(childStarts(first)).toEqual([]);
    const again = d.send({ type: 'timer.fired', seq: 2 });
    expect(again).toContainEqual({ type: 'endWaits', seqs: [2] });
    expect(childStarts(again)).toEqual([{ type: 'startChild', seq: 3, step: 'start', task: 'kid', path: 'lib/child', args: {}, attempt: 2 }]);
    expect(waits(d.childFinished(3, 'cancelled'))[0]).toMatchObject({ seq: 4, afterMs: 400, purpose: { attempt: 3 } });
    d.send({ type: 'timer.fired', seq: 4 });
    d.childFinished(5, 'completed', 'third time');
    expect(d.value).toBe('completed');
    expect(d.context.steps.start.result).toEqual({ execution_id: 905, status: 'completed', result: 'third time' });
  });

  it('spent attempts end the task with the last child\'s failure; a zero delay starts the next child at once', () => {
    const d = Driver.of([{ step: 'start', tool: [kid({ retry: { attempts: 2 } })] }]);
    const first = d.childFinished(1, 'failed');
    expect(waits(first)).toEqual([]);
    expect(childStarts(first)).toEqual([expect.objectContaining({ seq: 2, attempt: 2 })]);
    d.childFinished(2, 'failed');
    expect(d.value).toBe('failed');
    expect(d.context.finished?.error).toMatchObject({ code: 'child_failed' });
  });

  it('retry.when reads the failed attempt\'s outcome: false gives up; one that fails to render fails the task with template_error', () => {
    const no = Driver.of([{ step: 'start', tool: [kid({ retry: { attempts: 3, when: "{{ outcome.error.code == 'timeout' }}" } })] }]);
    expect(childStarts(no.childFinished(1, 'failed'))).toEqual([]);
    expect(no.value).toBe('failed');
    const yes = Driver.of([{ step: 'start', tool: [kid({ retry: { attempts: 3, when: "{{ outcome.data.status == 'failed' }}" } })] }]);
    expect(childStarts(yes.childFinished(1, 'failed'))).toHaveLength(1);
    const bad = Driver.of([{ step: 'start', tool: [kid({ retry: { attempts: 3, when: '{{ outcome.error.code + 1 }}' } })] }]);
    bad.childFinished(1, 'failed');
    expect(bad.context.finished?.error).toMatchObject({ code: 'template_error', message: expect.stringContaining('kid.retry.when') });
  });

  it('a timeout is retried like any failure, each attempt bounded by a timer of its own', () => {
    const d = Driver.of([{ step: 'start', tool: [kid({ timeout_seconds: 1, retry: { attempts: 2, delay_seconds: 1 } })] }]);
    const fired = d.send({ type: 'timer.fired', seq: 2 });
    expect(fired.map((e) => e.type)).toEqual(['endWaits', 'cancelChild', 'wait']);
    expect(waits(fired)[0]).toMatchObject({ seq: 3, purpose: { for: 'retry', attempt: 2 } });
    const second = d.send({ type: 'timer.fired', seq: 3 });
    expect(childStarts(second)).toEqual([expect.objectContaining({ seq: 4, attempt: 2 })]);
    expect(waits(second)).toEqual([expect.objectContaining({ seq: 5, afterMs: 1000, purpose: { task: 'kid', for: 'timeout', attempt: 2 } })]);
    d.send({ type: 'timer.fired', seq: 5 });
    expect(d.context.finished?.error).toMatchObject({ code: 'timeout' });
  });

  it('a retry\'s restart while paused is held until resume; a cancel during the delay ends its timer and cancels no child', () => {
    const d = Driver.of([{ step: 'start', tool: [kid({ retry: { attempts: 2, delay_seconds: 5 } })] }]);
    d.childFinished(1, 'failed');
    d.send({ type: 'execution.paused' });
    expect(childStarts(d.send({ type: 'timer.fired', seq: 2 }))).toEqual([]);
    expect(childStarts(d.send({ type: 'execution.resumed' }))).toEqual([expect.objectContaining({ seq: 3, attempt: 2 })]);

    const c = Driver.of([{ step: 'start', tool: [kid({ retry: { attempts: 2, delay_seconds: 5 } })] }]);
    c.childFinished(1, 'failed');
    const cancelled = c.send({ type: 'execution.cancelled', reason: 'stop', cancelled_at: '2026-01-01T00:00:00Z' });
    expect(actionable(cancelled).map((e) => e.type)).toEqual(['endWaits', 'finish']);
    expect(cancelled).toContainEqual({ type: 'endWaits', seqs: [2] });
  });

  it('a loop item\'s child is retried on its own; the loop waits for it', () => {
    const d = Driver.of([{ step: 'start', loop: { in: '{{ [1, 2] }}', mode: 'parallel' }, tool: [kid({ retry: { attempts: 2, delay_seconds: 1 } })] }]);
    expect(childStarts(d.all).map((e) => e.seq)).toEqual([1, 2]);
    d.childFinished(1, 'failed');
    d.childFinished(2, 'completed', 'b');
    expect(d.value).toBe('running');
    const again = d.send({ type: 'timer.fired', seq: 3 });
    expect(childStarts(again)).toEqual([expect.objectContaining({ seq: 4, attempt: 2 })]);
    d.childFinished(4, 'completed', 'a');
    expect(d.value).toBe('completed');
    expect(d.context.steps.start.result).toEqual([expect.objectContaining({ result: 'a' }), expect.objectContaining({ result: 'b' })]);
  });
});

describe('the simulator (the GUI\'s and registration\'s) models them', () => {
  const pb = (task: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: sim, path: sim/p }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: lib/child, ${task} }
    next:
      - { step: failed_over, when: "{{ outcome.status == 'error' }}" }
  - step: failed_over
    tool: { name: n, kind: noop }
`;

  it('each attempt takes one of the step\'s outcomes; the retry\'s delay fires by itself', () => {
    const yaml = pb('retry: { attempts: 3, delay_seconds: 5 }');
    expect(simulatePlaybook(yaml, { start: ['error', 'error', 'ok'] })).toMatchObject({ status: 'completed', path: ['start'], error: null });
    // The second attempt takes the second outcome (a delay counted as one would give it the third).
    expect(simulatePlaybook(yaml, { start: ['error', 'ok', 'error'] })).toMatchObject({ status: 'completed', path: ['start'] });
    expect(simulatePlaybook(yaml, { start: ['error', 'error', 'error'] })).toMatchObject({ path: ['start', 'failed_over'] });
    // Step by step (the GUI): a retry's delay is no choice; the next attempt waits for one.
    expect(simulatePlaybook(yaml, { start: ['error'] }, { pauseWhenUndecided: true })).toMatchObject({ status: 'running', waiting: ['start'] });
  });

  it('`timeout` times a playbook task with timeout_seconds out (code timeout)', () => {
    const r = simulatePlaybook(pb('timeout_seconds: 30'), { start: 'timeout', failed_over: 'ok' });
    expect(r).toMatchObject({ status: 'completed', path: ['start', 'failed_over'] });
    const alone = simulatePlaybook(pb('timeout_seconds: 30').replace(/    next:\n.*\n/, ''), { start: 'timeout' });
    expect(alone).toMatchObject({ status: 'failed', error: { code: 'timeout', step: 'start' } });
    // Without a timeout the task cannot time out: `timeout` is refused, as svc simulate refuses it.
    expect(() => simulatePlaybook(pb('args: {}').replace(/    next:\n.*\n/, ''), { start: 'timeout' })).toThrow('outcomes.start: start cannot end "timeout"');
  });

  it('paths: a retried task\'s attempts each end ok or error, its delays are no branch', () => {
    const report = playbookPaths(pb('retry: { attempts: 2, delay_seconds: 1 }'));
    // The last outcome of a path of three is failed_over's.
    expect(report.paths.map((p) => p.outcomes.map((o) => o.outcome)).sort()).toEqual([['error', 'error', 'error'], ['error', 'error', 'ok'], ['error', 'ok'], ['ok']]);
    expect(report.paths.find((p) => p.outcomes.length === 2)?.outcomes).toEqual([{ step: 'start', outcome: 'error' }, { step: 'start', outcome: 'ok' }]);
    expect(report.unreachable).toEqual([]);
  });
});
