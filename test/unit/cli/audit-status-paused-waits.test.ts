// `svc status` of a paused execution showed a wait whose time had come as if it were late:
// `timer until 2026-…Z (2.5s ago)`, a signal's `times out … (5m ago)`, with nothing saying the
// pause holds it (docs/cli.md: "timers that come due wait" until `svc resume`). Such a wait now
// says so: `: due, fires once resumed` (a signal's: `times out once resumed`); a running
// execution's waits, and a paused one's still ahead, read as before.
import { describe, expect, it } from 'vitest';
import { statusText } from '../../../src/cli/execution-status-view.ts';

const now = Date.parse('2026-11-30T18:42:20.000Z');
const at = (s: number) => new Date(now + s * 1000).toISOString();
type Wait = { step: string; kind: string; signal: string | null; wake_at: string; approval_roles: string[] | null };
const timer = (s: number): Wait => ({ step: 'cool', kind: 'timer', signal: null, wake_at: at(s), approval_roles: null });
const signal = (s: number): Wait => ({ step: 'approve', kind: 'signal', signal: 'approval', wake_at: at(s), approval_roles: ['admin'] });
const retry = (s: number): Wait => ({ ...timer(s), step: 'kid', ...{ for: 'retry', task: 'k', attempt: 2 } });
const detail = (status: string, waits: Wait[]) => ({ execution_id: 11, path: 'audit/w', status, progress: 0, started_at: at(-60), finished_at: null, waits });
const steps = { cool: { status: 'waiting' }, approve: { status: 'waiting' }, kid: { status: 'waiting' } };
const rowOf = (text: string, step: string) => text.split('\n').find((l) => l.startsWith(`${step} `));

describe('svc status: the waits of a paused execution', () => {
  it('a time past is due, held for the resume', () => {
    const text = statusText(detail('paused', [timer(-2.5), signal(-300), retry(-6)]), steps, now);
    expect(rowOf(text, 'cool')).toMatch(/waiting\s+timer until 2026-11-30T18:42:17\.500Z \(2\.5s ago\): due, fires once resumed$/);
    expect(rowOf(text, 'approve')).toMatch(/waiting\s+signal approval \(roles admin\), times out 2026-11-30T18:37:20Z \(5m00s ago\): due, times out once resumed$/);
    expect(rowOf(text, 'kid')).toMatch(/waiting\s+retry 2 of k at 2026-11-30T18:42:14Z \(6\.0s ago\): due, fires once resumed$/);
  });

  it('a time ahead, and any wait of a running execution, read as before', () => {
    expect(rowOf(statusText(detail('paused', [timer(30)]), steps, now), 'cool')).toMatch(/waiting\s+timer until 2026-11-30T18:42:50Z \(in 30\.0s\)$/);
    expect(rowOf(statusText(detail('running', [timer(-0.5)]), steps, now), 'cool')).toMatch(/waiting\s+timer until 2026-11-30T18:42:19\.500Z \(0\.5s ago\)$/);
  });
});
