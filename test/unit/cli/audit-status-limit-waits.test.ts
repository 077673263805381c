// `svc status` beside a step: what it waits for, its loop's count, its outcome, cut at 120
// characters. A loop whose items wait for room on a task's limit printed one `room on limit …
// since …` per waiting command, so past the second the line was cut and the loop's count (how
// many items are done) never showed. The commands waiting on one limit and key are now one
// phrase, after the loop's count.
import { expect, it } from 'vitest';
import { statusText } from '../../../src/cli/execution-status-view.ts';

const now = Date.parse('2026-11-30T18:42:20.000Z');
const since = (s: number) => new Date(now - s * 1000).toISOString();
const wait = (key: string, s: number) => ({ step: 'start', limit: 'partner', key, since: since(s) });
const detail = (limit_waits: ReturnType<typeof wait>[]) => ({ execution_id: 15, path: 'audit/rate', status: 'running', progress: 0, started_at: since(10), finished_at: null, limit_waits });
const rowOf = (text: string) => text.split('\n').find((l) => l.startsWith('start '));

it('counts the commands of a loop waiting on one limit and key, and keeps the loop count on the line', () => {
  const text = statusText(detail([wait('a1', 9), wait('a1', 8), wait('a1', 7), wait('a1', 7)]), { start: { status: 'active', loop: { length: 6, done: 2, in_flight: 4 } } }, now);
  // Items waiting for room are waiting, not in flight (the line is cut at 120 characters past the key).
  expect(rowOf(text)).toMatch(/start\s+active\s+2\/6 items done, 0 in flight, 4 waiting; 4 commands wait for room on limit partner key "a1" since 2026-11-30T18:4/);
});

it('one phrase per limit and key, oldest first', () => {
  const text = statusText(detail([wait('a1', 9), wait('a2', 6), wait('a1', 3)]), { start: { status: 'active' } }, now);
  // The line is cut at 120 characters: the second key's phrase begins there.
  expect(rowOf(text)).toMatch(/start\s+active\s+2 commands wait for room on limit partner key "a1" since 2026-11-30T18:42:11(\.000)?Z \(9\.0s ago\); room on limit partner k/);
});
