import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playbookFromYaml, playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// Honest simulation: with an example of a step's result the simulation takes the branch a real
// run through a worker takes; without one it says the branch depends on data, and registration
// does not call the branches unreachable.

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

const BRANCH = (examples: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: probe, path: sim/probe }
workflow:
  - step: start
    tool: { name: check, kind: shell, command: "echo up" }
    next:
      - { step: healthy, when: "{{ steps.start.result.stdout | trim == 'up' }}" }
      - { step: sick }
  - step: healthy
    tool: { name: h, kind: shell, command: "echo healthy" }
  - step: sick
    tool: { name: s, kind: shell, command: "echo sick" }
${examples}`;

const WITH_EXAMPLE = BRANCH('examples:\n  start: { exit_code: 0, stdout: "up\\n", stderr: "" }\n');
const WITHOUT = BRANCH('');

const entered = (events: { event_type: string; step?: string | null }[]) => events.filter((e) => e.event_type === 'step.enter').map((e) => e.step);

describe('simulation with examples', () => {
  it('takes the branch a real run takes; without examples it depends on data and registration warns of nothing', async () => {
    const reg = await http(s.url, 'POST', '/api/catalog/playbook', { content: WITHOUT });
    expect(reg.status).toBe(201);
    expect(reg.body.warnings).toEqual([]);
    const id = await s.run('sim/probe');
    expect(await s.wait(id)).toMatchObject({ status: 'completed' });
    const real = entered(await s.events(id));
    expect(real).toEqual(['start', 'healthy']);

    const sim = simulatePlaybook(WITH_EXAMPLE);
    expect(sim).toMatchObject({ status: 'completed', path: real });
    expect(sim.steps.sick.status).toBe('skipped');
    // The same example given by the caller (svc simulate --result) instead of the playbook.
    expect(simulatePlaybook(WITHOUT, {}, { results: { start: { exit_code: 0, stdout: 'up\n', stderr: '' } } }).path).toEqual(real);
    // Another result takes the other branch.
    expect(simulatePlaybook(WITHOUT, {}, { results: { start: { exit_code: 0, stdout: 'down\n', stderr: '' } } }).path).toEqual(['start', 'sick']);

    const blind = simulatePlaybook(WITHOUT);
    expect(blind).toMatchObject({ status: 'depends_on_data', path: ['start'], undecided: { step: 'start', at: 'next', needs: ['start'] } });
    expect(blind.steps.start.status).not.toBe('completed');
    const paths = playbookPaths(playbookFromYaml(WITHOUT));
    expect(paths.unreachable).toEqual([]);
    expect(paths.depends_on_data.sort()).toEqual(['healthy', 'sick']);
    expect(paths.paths.every((p) => p.status === 'depends_on_data')).toBe(true);

    // With the example, registration still warns of nothing (examples are samples), and --paths
    // does not call sick unreachable: the example keeps it off every path, other results reach it.
    const withExample = await http(s.url, 'POST', '/api/catalog/playbook', { content: WITH_EXAMPLE });
    expect(withExample.body.warnings).toEqual([]);
    const known = playbookPaths(playbookFromYaml(WITH_EXAMPLE));
    expect(known).toMatchObject({ unreachable: [], depends_on_data: ['sick'] });
    expect(known.paths.some((p) => p.path.join(' ') === 'start healthy' && p.status === 'completed')).toBe(true);
  });
});
