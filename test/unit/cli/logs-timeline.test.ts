// `svc logs`' timeline: each line's time since the start and since the line before. A task's
// events carry its start (`at`) and how long it ran; its line stands at its end, so the gap on it
// is the task's own time (where the time went), not a gap on the event after it.
import { describe, expect, it } from 'vitest';
import { Timeline } from '../../../src/cli/logs-view.ts';
import type { ExecutionEvent } from '../../../src/cli/run-api.ts';

const T0 = Date.parse('2026-11-26T10:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const stored = iso(500); // when the report was stored: after everything it tells
const event = (id: number, type: string, context: Record<string, unknown>): ExecutionEvent => ({ event_id: id, event_type: type, step: 's', context, created_at: stored });

/** The AT and GAP cells of each line. */
function cells(events: ExecutionEvent[]): string[][] {
  const t = new Timeline();
  return events.map((e) => t.line(e).trim().split(/\s+/).slice(1, 3));
}

describe('svc logs timeline', () => {
  it("puts a task's line at its end: the gap before it is the task's time", () => {
    expect(
      cells([
        event(1, 'command.started', { at: iso(0), seq: 1 }),
        // A first attempt of 100 ms that failed, then the task's last one: 300 ms in all.
        event(2, 'call.attempt', { at: iso(0), task: 'fetch', kind: 'http', attempt: 1, duration_ms: 100 }),
        event(3, 'call.done', { at: iso(0), task: 'fetch', kind: 'http', attempts: 2, duration_ms: 300, attempt_ms: 150 }),
        event(4, 'command.completed', { at: iso(300), seq: 1 }),
      ]),
    ).toEqual([
      ['+0ms', '-'],
      ['+100ms', '+100ms'],
      ['+300ms', '+200ms'],
      ['+300ms', '+0ms'],
    ]);
  });

  it('a task line without its start stands where it was stored, as any event without a time', () => {
    expect(cells([event(1, 'command.started', { at: iso(0) }), event(2, 'call.error', { task: 'x', duration_ms: 50 })])).toEqual([
      ['+0ms', '-'],
      ['+500ms', '+500ms'],
    ]);
  });
});

describe('svc logs timeline, rounding', () => {
  it("a command's end a millisecond before its task's rounded end is the same moment (+0ms), a real step back is shown", () => {
    expect(
      cells([
        event(1, 'command.started', { at: iso(0) }),
        event(2, 'call.done', { at: iso(0), task: 't', duration_ms: 12 }),
        event(3, 'command.completed', { at: iso(11) }),
        event(4, 'step.exit', { at: iso(5) }),
      ]),
    ).toEqual([
      ['+0ms', '-'],
      ['+12ms', '+12ms'],
      ['+11ms', '+0ms'],
      ['+5ms', '-6ms'],
    ]);
  });
});

describe('svc logs timeline, child executions', () => {
  it("names the child on its lines, and its end's step (stored without one) by the seq that started it", () => {
    const t = new Timeline();
    const started: ExecutionEvent = { event_id: 1, event_type: 'child.started', step: 'kid', context: { seq: 7, path: 'a/child', task: 'sub', child_execution_id: 3 }, created_at: iso(0) };
    const finished: ExecutionEvent = { event_id: 2, event_type: 'child.finished', step: null, context: { seq: 7, status: 'failed', child_execution_id: 3 }, error: { code: 'exit_code', message: 'command exited with code 4' }, created_at: iso(40) };
    expect(t.line(started).trim().split(/\s{2,}/).slice(3)).toEqual(['child.started', 'kid', 'execution 3 a/child started']);
    expect(t.line(finished).trim().split(/\s{2,}/).slice(3)).toEqual(['child.finished', 'kid', 'execution 3 failed: exit_code: command exited with code 4']);
  });
});

describe('svc logs timeline, a failed task', () => {
  it("shows the failed task's output (its last attempt has no line of its own)", () => {
    const failed: ExecutionEvent = {
      event_id: 8,
      event_type: 'command.failed',
      step: 's',
      context: { seq: 1 },
      result: { tasks: { loud: { status: 'error', data: { stderr: 'no such table: users', stdout: '', exit_code: 1 }, error: { code: 'exit_code', message: 'command exited with code 1' } } } },
      error: { code: 'exit_code', task: 'loud', message: 'command exited with code 1' },
      created_at: iso(0),
    };
    expect(new Timeline().line(failed)).toContain('loud: exit_code: command exited with code 1: output {"stderr":"no such table: users"');
  });
});

describe('svc logs timeline, late reports', () => {
  it('says a report that came after its command was over was not applied', () => {
    const t = new Timeline();
    const late: ExecutionEvent = { event_id: 7, event_type: 'command.completed', step: 's', context: { seq: 1, late: true, command_status: 'CANCELLED' }, result: { tasks: { nap: { status: 'ok', data: { exit_code: 0 } } } }, created_at: iso(0) };
    expect(t.line(late)).toContain('late, not applied: nap: {"exit_code":0}');
    expect(t.line({ ...late, event_id: 8, context: { seq: 1 } })).not.toContain('late');
  });
});

describe('svc logs timeline, a child execution', () => {
  it('names its parent on its start', () => {
    const started: ExecutionEvent = { event_id: 1, event_type: 'execution.started', step: null, context: { input: { path: 'a/child', parentExecutionId: 2, parentSeq: 7 } }, created_at: iso(0) };
    expect(new Timeline().line(started)).toMatch(/execution\.started\s+-\s+child of execution 2$/m);
    expect(new Timeline().line({ ...started, context: { input: { parentExecutionId: null }, requested_by: { sub: 'local' } } })).toMatch(/-\s+by local$/m);
  });
});
