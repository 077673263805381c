// A playbook whose steps without tools enter one another with nothing to end it was registered
// (201, no warning) and every run of it failed step_cycle: the simulation registration runs saw
// the path fail so and said nothing. Such a path is now a problem at the arc that closes the
// cycle; a cycle with a task, or one a start's data may end, is registered as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const register = (content: string) => http(t.url, 'POST', '/api/catalog/playbook', { content });
const head = (path: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: c, path: ${path} }\nworkflow:\n`;

describe('a cycle of steps without tools', () => {
  it('that every run enters is refused at the arc closing it, and nothing is stored', async () => {
    const res = await register(`${head('cyc/ping-pong')}  - step: start\n    next: ping\n  - step: ping\n    next: pong\n  - step: pong\n    next: ping\n`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.detail.code).toBe('invalid_playbook');
    expect(res.body.detail.problems).toEqual([
      {
        path: 'workflow[2].next',
        line: 10,
        column: 5,
        message: expect.stringMatching(/^closes a cycle of steps that run no task \(ping → pong → ping\) and never leave it: every run fails step_cycle there \(more than 1000 steps entered without running a task.*\); give one of them a tool/),
      },
    ]);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cyc/ping-pong')).status).toBe(404);
  });

  it('that a task in error leads to names the outcome that takes a run there', async () => {
    const res = await register(
      `${head('cyc/on-error')}  - step: start\n    tool: { name: t, kind: noop }\n    next: [ { step: done }, { step: spin, when: "{{ outcome.status == 'error' }}" } ]\n  - step: done\n  - step: spin\n    next: spin\n`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.detail.problems).toEqual([{ path: 'workflow[2].next', line: 10, column: 5, message: expect.stringContaining('(spin → spin) and never leave it: a run whose step start ends error fails step_cycle') }]);
  });

  it('too long a chain of them is refused at the step where runs fail', async () => {
    const steps = Array.from({ length: 1002 }, (_, i) => `  - step: s${i}\n    next: s${i + 1}\n`).join('');
    const res = await register(`${head('cyc/chain')}${steps}  - step: s1002\n`);
    expect(res.status, JSON.stringify(res.body.warnings)).toBe(400);
    expect(res.body.detail.problems).toEqual([{ path: 'workflow[1000]', line: 2005, column: 5, message: expect.stringMatching(/^every run fails step_cycle at this step .*1000 steps in a row run no task \(s0 → … → s1000\)/) }]);
  }, 120_000);

  // Read off the workflow (machines/step-cycle-problem.ts entryStepCycle), not walked by the machine: the same problem.
  it('a chain of 5,001 of them is refused at the same step', async () => {
    const steps = Array.from({ length: 5000 }, (_, i) => `  - step: s${i}\n    next: s${i + 1}\n`).join('');
    const res = await register(`${head('cyc/long-chain')}${steps}  - step: s5000\n`);
    expect(res.status, JSON.stringify(res.body.warnings)).toBe(400);
    expect(res.body.detail.problems).toEqual([{ path: 'workflow[1000]', line: 2005, column: 5, message: expect.stringMatching(/^every run fails step_cycle at this step .*1000 steps in a row run no task \(s0 → … → s1000\)/) }]);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cyc/long-chain')).status).toBe(404);
  });

  it('with a task in it, or ended by what a start gives, is registered', async () => {
    const withTask = await register(`${head('cyc/polling')}  - step: start\n    tool: { name: t, kind: noop }\n    next: again\n  - step: again\n    next: start\n`);
    expect(withTask.status, JSON.stringify(withTask.body)).toBe(201);
    const byData = await register(`${head('cyc/by-data')}  - step: start\n    next: [ { step: start, when: "{{ workload.spin }}" }, { step: end } ]\n  - step: end\n`);
    expect(byData.status, JSON.stringify(byData.body)).toBe(201);
    expect(byData.body.warnings).toEqual([]);
  });
});
