// `svc status` of the approval example (examples/approval.yaml) cut its waiting step's detail at
// the 120 characters of a log line: `signal approval (roles admin), times out … (in 23h59m),
// waiting since 2026-…Z (…`, the wait's age, what the line is for, lost (docs/cli.md shows it
// whole). A step's detail now holds a whole signal wait with roles, timeout and since, also of a
// paused execution; data that has no bound of its own (a task's error) is still cut.
import { describe, expect, it } from 'vitest';
import { statusText } from '../../../src/cli/execution-status-view.ts';

const now = Date.parse('2026-12-03T20:14:43.000Z');
const at = (s: number) => new Date(now + s * 1000).toISOString();
type Wait = { step: string; kind: string; signal: string | null; wake_at: string; approval_roles: string[] | null; since: string };
const approvalWait: Wait = { step: 'approve', kind: 'signal', signal: 'approval', wake_at: at(86_377.585), approval_roles: ['operator'], since: at(-22.412) };
const detail = (status: string, waits: Wait[]) => ({ execution_id: 54, path: 'examples/approval', status, progress: 20, started_at: at(-22.5), finished_at: null, waits });
const rowOf = (text: string, step: string) => text.split('\n').find((l) => l.startsWith(`${step} `)) ?? '';

describe('svc status: a waiting step\'s detail', () => {
  it('shows a signal wait whole, its age included', () => {
    const row = rowOf(statusText(detail('running', [approvalWait]), { approve: { status: 'waiting' } }, now), 'approve');
    expect(row).toMatch(/waiting\s+signal approval \(roles operator\), times out 2026-12-04T20:14:20\.585Z \(in 23h59m\), waiting since 2026-12-03T20:14:20\.588Z \(22\.4s ago\)$/);
  });

  it('shows it whole when paused, its timeout held for the resume', () => {
    const row = rowOf(statusText(detail('paused', [{ ...approvalWait, wake_at: at(-300) }]), { approve: { status: 'waiting' } }, now), 'approve');
    expect(row).toMatch(/: due, times out once resumed, waiting since 2026-12-03T20:14:20\.588Z \(22\.4s ago\)$/);
  });

  it('still cuts a long error', () => {
    const steps = { build: { status: 'failed', outcome: { status: 'error', error: { code: 'exit_code', message: 'x'.repeat(5000) } } } };
    const row = rowOf(statusText(detail('failed', []), steps, now), 'build');
    expect(row.endsWith('…')).toBe(true);
    expect(row.length).toBeLessThan(400);
  });
});
