// A timer's `until` written as it is (no template) was checked only when a run reached it:
// `until: 2026-12-01` (a day, no time or offset) or `until: tomorrow` registered, and every run
// then failed the step with wait_until. Registration now refuses such a literal at
// workflow[i].wait.until, with its line; a literal time and any template register as before. A
// bare number (`until: 1767225600000`) was refused as 'expected string, got 1767225600000': its
// problem now says what to write.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (until: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: at, path: t/at }
workload: { at: "2026-12-01T06:00:00Z" }
workflow:
  - step: start
    tool: { name: a, kind: noop }
    next: later
  - step: later
    wait: { until: ${until} }
`;

describe('a literal wait.until', () => {
  it.each(['2026-12-01', 'tomorrow', '"2027-02-30T00:00:00Z"', '"01.02.2026 10:00 +01:00"', '"2026-12-01T06:00:00"', '"1767225600000"'])('%s is a problem at registration, with its place', (until) => {
    const r = parsePlaybook(playbook(until));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([{ path: 'workflow[1].wait.until', message: expect.stringMatching(/^must be a time: ISO 8601 with its offset .* every run would fail on \(wait_until\)$/), line: 10, column: 13 }]);
  });

  it('a bare number is a problem that says how to write epoch milliseconds', () => {
    const r = parsePlaybook(playbook('1767225600000'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([expect.objectContaining({ path: 'workflow[1].wait.until', message: expect.stringContaining('"{{ 1767225600000 }}"') })]);
  });

  it.each(['2026-12-01T06:00:00+01:00', '"2026-12-01 05:00Z"', '"2000-01-02T03:04:05.5-0130"', '"{{ workload.at }}"', '"{{ 1767225600000 }}"', '"{{ \'not a time\' }}"'])('%s registers (a template is checked as it renders)', (until) => {
    const r = parsePlaybook(playbook(until));
    expect(r.ok ? [] : r.problems).toEqual([]);
  });
});
