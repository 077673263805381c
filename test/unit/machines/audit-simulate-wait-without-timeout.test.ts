// A step waiting for a signal without `timeout` never times out in a run: it waits until signalled
// or cancelled (docs/playbook-dsl.md, *Waiting*). The simulation timed it out all the same when a
// step's outcome was `timeout` or `error`: `svc simulate --paths` listed a path no run can take
// (`gate=timeout`), and registration's warnings, which walk those paths, took a step reached only
// by a timeout arc of such a wait for reachable (no "no path reaches step" warning).
import { describe, expect, it } from 'vitest';
import { playbookPaths, playbookWarnings, simulatePlaybook, playbookFromYaml } from '../../../machines/simulate-playbook.ts';

const yaml = (timeout: string) => `apiVersion: svc/v1
metadata: { name: gate, path: audit/simulate-wait-timeout }
workflow:
  - step: gate
    wait: { signal: go${timeout} }
    next:
      - { step: expired, when: "{{ outcome.status == 'timeout' }}" }
      - { step: done }
  - step: done
    tool: { name: t, kind: noop }
  - step: expired
    tool: { name: t, kind: noop }
`;
const WITHOUT = yaml('');
const WITH = yaml(', timeout: 1h');

describe('a signal wait without timeout, simulated', () => {
  it('gets its signal (a timeout asked of it is refused); with a timeout it times out', () => {
    expect(simulatePlaybook(WITHOUT, { gate: 'ok' })).toMatchObject({ status: 'completed', path: ['gate', 'done'] });
    expect(() => simulatePlaybook(WITHOUT, { gate: 'timeout' })).toThrow('outcomes.gate: gate cannot end "timeout": gate waits for signal go, and its signal comes (ok): without a timeout it never times out');
    expect(simulatePlaybook(WITH, { gate: 'timeout' })).toMatchObject({ status: 'completed', path: ['gate', 'expired'] });
  });

  it('has no timeout path, and registration warns that its timeout arc reaches nothing', () => {
    const without = playbookPaths(WITHOUT);
    expect(without.paths.map((p) => p.outcomes.find((o) => o.step === 'gate')?.outcome)).not.toContain('timeout');
    expect(without.unreachable).toEqual(['expired']);
    expect(playbookWarnings(playbookFromYaml(WITHOUT))).toContain('workflow.expired: no path reaches step expired (every command simulated ok or error)');
    const withTimeout = playbookPaths(WITH);
    expect(withTimeout.paths).toContainEqual(expect.objectContaining({ status: 'completed', path: ['gate', 'expired'] }));
    expect(withTimeout.unreachable).toEqual([]);
  });
});
