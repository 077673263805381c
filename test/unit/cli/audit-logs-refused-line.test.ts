// `svc logs` of an execution whose command was claimed again after its worker was lost: the
// reports of the lost attempt, which came after the new claim, are kept as command.refused
// records, and their lines showed their raw context cut at 120 characters
// ('{"at":"…","seq":1,"detail":"command 9 was claimed again (attempt 3); this report is from attempt…')
// or, for the completion, its result alone ('{"tasks":{"long":{"data":{…},"status":"ok"}}}'),
// which read as the command completing. docs/cli.md promises such a report's line says it was
// not applied. It now says so, why, of which attempt, and what the report said.
import { expect, it } from 'vitest';
import { Timeline } from '../../../src/cli/logs-view.ts';
import type { ExecutionEvent } from '../../../src/cli/run-api.ts';

const at = '2026-12-03T07:53:13.007Z';
const event = (id: number, type: string, context: Record<string, unknown>, result: unknown = null, error: unknown = null): ExecutionEvent => ({ event_id: id, event_type: type, step: 'start', context, result, error, created_at: at });
const detailOf = (line: string) => line.split(/ {2,}/).slice(5).join('  ').trim();
const stale = { seq: 1, refused: 'stale_claim', detail: 'command 9 was claimed again (attempt 3); this report is from attempt 2', attempt: 2, command_attempt: 3 };

it("a refused report's line says it was not applied, why, and what it reported", () => {
  const t = new Timeline(['start']);
  t.line({ ...event(1, 'execution.started', { requested_by: { sub: 'local' } }), step: null });
  expect(detailOf(t.line(event(4, 'command.refused', { ...stale, at, reported: 'command.started', loop_index: null })))).toBe('refused, not applied (stale_claim): command.started of attempt 2: seq 1');
  expect(detailOf(t.line(event(5, 'command.refused', { ...stale, at, reported: 'call.done', kind: 'shell', task: 'long', attempts: 1, duration_ms: 3233 })))).toBe(
    'refused, not applied (stale_claim): call.done of attempt 2: long (shell, 3.233s)',
  );
  const done = detailOf(t.line(event(6, 'command.refused', { ...stale, at, reported: 'command.completed' }, { tasks: { long: { status: 'ok', data: { exit_code: 0, stdout: 'ok\n', stderr: '' } } } })));
  expect(done).toBe('refused, not applied (stale_claim): command.completed of attempt 2: long: {"exit_code":0,"stdout":"ok\\n","stderr":""}');
  // A report naming no attempt (another worker's than the holder's).
  expect(detailOf(t.line(event(7, 'command.refused', { seq: 1, refused: 'not_holder', detail: 'not the holder', attempt: null, reported: 'command.failed' }, null, { code: 'exit_code', message: 'exited 1', task: 'long' })))).toBe(
    'refused, not applied (not_holder): command.failed: long: exit_code: exited 1',
  );
});
