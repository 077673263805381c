import { describe, expect, it } from 'vitest';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import { createExecutionMachine, topStateOf } from '../../../machines/execution.machine.ts';
import type { ExecutionEvent } from '../../../machines/execution/types.ts';
import { childTask, err, inputOf, ok, playbookOf, shell, type ExecutionSnapshot } from './helpers.ts';
import { keyOf, numberOf } from '../../../machines/execution/keys.ts';

// Model-based walk of the execution machine (xstate/graph) over one playbook that has a
// recovery arc, an inclusive fork, a parallel loop and a child playbook: from every reachable
// state, each pending command may complete, fail or (for a child) finish, and the execution may
// be cancelled. Invariants are checked on every state of every path.

const OK = "{{ outcome.status == 'ok' }}";
const ERROR = "{{ outcome.status == 'error' }}";

const machine = createExecutionMachine(
  playbookOf([
    { step: 'start', tool: shell('a'), next: [{ step: 'fork', when: OK }, { step: 'recover', when: ERROR }] },
    { step: 'recover', tool: shell('r') },
    { step: 'fork', tool: shell('f'), next: { mode: 'inclusive', arcs: ['items', 'child'] } },
    { step: 'items', loop: { in: [1, 2], mode: 'parallel', max_in_flight: 2 }, tool: shell('i') },
    { step: 'child', tool: childTask('c', 'lib/c') },
  ]),
);
const input = inputOf();

function eventsFrom(s: ExecutionSnapshot): ExecutionEvent[] {
  if (s.status === 'done') return [];
  const out: ExecutionEvent[] = [{ type: 'execution.cancelled', reason: 'walk', cancelled_at: '2026-01-01T00:00:00Z' }];
  for (const [seqText, p] of Object.entries(s.context.pending)) {
    const seq = numberOf(seqText);
    if (p.kind === 'child') {
      out.push({ type: 'child.finished', seq, child_execution_id: 900 + seq, status: 'completed', result: 'C', error: null });
      out.push({ type: 'child.finished', seq, child_execution_id: 900 + seq, status: 'failed', result: null, error: { message: 'child broke' } });
      continue;
    }
    const step = s.context.runs[keyOf(p.run)].step;
    const task = { start: 'a', recover: 'r', fork: 'f', items: 'i' }[step] ?? 'x';
    out.push({ type: 'command.completed', seq, tasks: { [task]: ok(seq) } });
    out.push({ type: 'command.completed', seq, tasks: { [task]: err('no') } });
  }
  return out;
}

const serializeState = (s: ExecutionSnapshot) => JSON.stringify([s.value, s.context]);
const serializeEvent = (e: ExecutionEvent) => JSON.stringify(e);

function checkInvariants(s: ExecutionSnapshot, where: string): void {
  const c = s.context;
  const value = topStateOf(s.value);
  if (value === 'running') {
    expect(c.finished, where).toBeNull();
    // Something is in flight: a running execution with nothing pending would wait forever.
    expect(Object.keys(c.pending).length, where).toBeGreaterThan(0);
    for (const p of Object.values(c.pending)) expect(c.runs[keyOf(p.run)], where).toBeDefined();
  } else {
    expect(s.status, where).toBe('done');
    expect(c.finished?.status, where).toBe(value);
    expect(c.pending, where).toEqual({});
  }
  for (const seq of Object.keys(c.pending)) expect(numberOf(seq), where).toBeLessThan(c.nextSeq);
}

describe('execution machine: model-based paths (xstate/graph)', () => {
  it('reaches completed, failed and cancelled, and every state on the way keeps the invariants', () => {
    const paths = getShortestPaths(machine, { input, events: eventsFrom, serializeState, serializeEvent });
    const finals = new Set(paths.map((p) => topStateOf(p.state.value)));
    expect([...finals].sort()).toEqual(['cancelled', 'completed', 'failed', 'running']);
    for (const p of paths) checkInvariants(p.state, p.steps.map((s) => s.event.type).join(' > '));
    expect(paths.length).toBeGreaterThan(20);
  });

  it('every simple path keeps the invariants, and a completed run either recovered or ran both branches of the fork', () => {
    const paths = getSimplePaths(machine, { input, events: eventsFrom, serializeState, serializeEvent });
    expect(paths.length).toBeGreaterThan(50);
    for (const p of paths) {
      const where = p.steps.map((s) => serializeEvent(s.event)).join(' > ');
      checkInvariants(p.state, where);
      if (topStateOf(p.state.value) === 'completed') {
        // Either the fork ran both branches (items, child) or start failed and recover ran.
        const done = p.state.context.completedSteps;
        expect(done.includes('recover') || (done.includes('items') && done.includes('child')), where).toBe(true);
        expect(p.state.context.steps.items?.status ?? 'ok', where).toBe('ok');
      }
    }
  });
});
