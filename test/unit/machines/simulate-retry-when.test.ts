// A `playbook` task's server-held retry decided on a failure the simulation chose: its
// `retry.when` reading the error's code was decided on the code `simulated` (never retried),
// where a run retries or not on the real code; docs/playbook-dsl.md promises such a decision
// is not the simulation's to make.
import { describe, expect, it } from 'vitest';
import { playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { undecidedText } from '../../../machines/simulation-data.ts';

const playbook = (when: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: retry_when, path: sim/retry_when }
workflow:
  - step: start
    tool: { name: c, kind: playbook, path: sim/child, retry: { attempts: 3, when: "${when}" } }
    next: [{ step: after }]
  - step: after
    tool: { name: o, kind: noop }
`;

describe('a playbook task whose retry.when reads the failure', () => {
  it('stops depends_on_data before retrying or not on a simulated failure', () => {
    const r = simulatePlaybook(playbook("{{ outcome.error.code == 'child_failed' }}"), { start: ['error', 'ok'] });
    expect(r.status).toBe('depends_on_data');
    expect(r.undecided).toEqual({ step: 'start', at: 'retry.when', needs: ['start.error'] });
    expect(undecidedText(r.undecided!)).toBe('whether start retries its failed task depends on data: no error code of start (a simulated failure has none)');
    expect(r.path).toEqual(['start']);
  });

  it('decides a retry.when on the outcome status, and the last attempt has none to decide', () => {
    const onStatus = simulatePlaybook(playbook("{{ outcome.status == 'error' }}"), { start: ['error', 'ok'] });
    expect(onStatus).toMatchObject({ status: 'completed', path: ['start', 'after'] });
    // Attempts used up: the failure is the task's, whatever its code.
    const spent = simulatePlaybook(playbook("{{ outcome.error.code == 'child_failed' }}").replace('attempts: 3', 'attempts: 1'), { start: 'error' });
    expect(spent.status).toBe('failed');
  });

  it('--paths ends the failing path there, once', () => {
    const report = playbookPaths(playbook("{{ outcome.error.code == 'child_failed' }}"));
    const undecided = report.paths.filter((p) => p.status === 'depends_on_data');
    expect(undecided).toEqual([{ status: 'depends_on_data', path: ['start'], outcomes: [{ step: 'start', outcome: 'error' }], cut: false, undecided: { step: 'start', at: 'retry.when', needs: ['start.error'] } }]);
    expect(report.paths.some((p) => p.status === 'completed')).toBe(true);
  });
});
