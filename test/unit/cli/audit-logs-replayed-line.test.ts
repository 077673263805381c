// `svc logs` of a retry showed a replayed step's line as any other event's: its result JSON (or,
// without one, its context, `{"status":"ok"}`), read as a step that ran and answered at that
// moment. It now says the outcome and that it was replayed from the execution retried (or the one
// auto-resume restarted), not run here.
import { expect, it } from 'vitest';
import { Timeline } from '../../../src/cli/logs-view.ts';
import type { ExecutionEvent } from '../../../src/cli/run-api.ts';

const at = '2026-11-26T10:00:00.000Z';
const event = (id: number, type: string, step: string | null, context: Record<string, unknown>, result: unknown = null): ExecutionEvent => ({ event_id: id, event_type: type, step, context, result, created_at: at });
const detailOf = (line: string) => line.split(/ {2,}/).slice(5).join('  ').trim();

it("a replayed step's line says it was replayed, and from which execution", () => {
  const t = new Timeline(['fetch', 'approve']);
  t.line(event(1, 'execution.started', null, { retry_of: 4, from_step: 'deploy', requested_by: { sub: 'alice' } }));
  expect(detailOf(t.line(event(2, 'step.replayed', 'fetch', { status: 'ok' })))).toBe('ok (replayed from execution 4, not run here)');
  expect(detailOf(t.line(event(3, 'step.replayed', 'approve', { status: 'ok' }, { approved: true })))).toBe('ok (replayed from execution 4, not run here): {"approved":true}');
});

it("auto-resume's successor names the execution it restarted", () => {
  const t = new Timeline(['fetch']);
  t.line(event(1, 'execution.started', null, { resumed_from: 9 }));
  expect(detailOf(t.line(event(2, 'step.replayed', 'fetch', { status: 'timeout' })))).toBe('timeout (replayed from execution 9, not run here)');
});
