// A decision the simulation could not make in the start's own transition (an arc of a step
// without tool reading a workload value no default gives) left the steps past it as the missing
// value's template error left them: `svc simulate` printed `status: depends_on_data (the next
// step after start depends on data: ...)` over `steps: start completed, go skipped, stay
// skipped`, and the console drew both branches as not taken, though the decision was not made.
// They are `pending`, as the steps past a later undecided decision are.
import { describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: start_undecided, path: audit/simulate-start-undecided }
workflow:
  - step: start
    next:
      - { step: go, when: "{{ workload.go }}" }
      - { step: stay }
  - step: go
  - step: stay
`;

describe('a simulation undecided in its first transition', () => {
  it('leaves the steps past the decision pending, not skipped', () => {
    const r = simulatePlaybook(YAML);
    expect(r).toMatchObject({ status: 'depends_on_data', path: ['start'], undecided: { step: 'start', at: 'next', workload: ['go'] }, error: null });
    expect(r.steps).toEqual({ start: { status: 'completed', outcome: { status: 'ok', error: null } }, go: { status: 'pending' }, stay: { status: 'pending' } });
  });

  it('shows the same steps as a later undecided decision does', () => {
    // The same decision one command later: the view is the one before it.
    const later = simulatePlaybook(YAML.replace('  - step: start\n', '  - step: start\n    tool: { name: t, kind: shell, command: "true" }\n'));
    expect(later).toMatchObject({ status: 'depends_on_data', path: ['start'] });
    expect(later.steps.go).toEqual({ status: 'pending' });
    expect(later.steps.stay).toEqual({ status: 'pending' });
  });

  it('decides as before once the payload gives the value', () => {
    const r = simulatePlaybook(YAML, {}, { payload: { go: false } });
    expect(r).toMatchObject({ status: 'completed', path: ['start', 'stay'] });
    expect(r.steps.go).toEqual({ status: 'skipped' });
  });
});
