// `svc logs` said who paused and who resumed an execution (`by alice: reason`) but not who
// cancelled it: its execution.cancelled line showed the reason alone, though the event records
// requested_by (and, for a child a cancel took along, who cancelled its parent). It now says it.
import { expect, it } from 'vitest';
import { Timeline } from '../../../src/cli/logs-view.ts';
import type { ExecutionEvent } from '../../../src/cli/run-api.ts';

const at = '2026-11-26T10:00:00.000Z';
const event = (id: number, type: string, context: Record<string, unknown>): ExecutionEvent => ({ event_id: id, event_type: type, step: null, context, result: null, created_at: at });
const detailOf = (line: string) => line.split(/ {2,}/).slice(5).join('  ').trim();

it("a cancel's line says who cancelled, then why, as a pause's does", () => {
  const t = new Timeline(['gate']);
  t.line(event(1, 'execution.started', { requested_by: { sub: 'alice' } }));
  expect(detailOf(t.line(event(2, 'execution.paused', { requested_by: { sub: 'bob' }, reason: 'checking' })))).toBe('by bob: checking');
  expect(detailOf(t.line(event(3, 'execution.cancelled', { reason: 'wrong version', cancelled_at: at, requested_by: { sub: 'bob', via: 'token', role: 'operator' } })))).toBe('by bob: wrong version');
  // A parent that failed, or an older log: no one to name.
  expect(detailOf(t.line(event(4, 'execution.cancelled', { reason: 'parent execution 1 ended', cancelled_at: at })))).toBe('parent execution 1 ended');
});
