// A `playbook` task carries its child's error, code included, as its outcome, so a code an
// execution ends with is one its parent's `when:` can test: a child that fails with step_cycle
// (a cycle of steps without tools) hands step_cycle to its parent's arcs. The registry said
// step_cycle was an execution's code only ("no `when:` sees it") and docs/playbook-dsl.md, which
// lists every code a `when:` can test, left it out (test/unit/error-codes-docs.test.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executionApi } from '../../helpers/execution-api.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

it("a parent's arc tests the step_cycle its child failed with", async () => {
  const api = executionApi(t.url);
  // A cycle every run enters is refused at registration: this one only the args given enter.
  await api.register(`apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: cycle, path: cyc/child }\nworkflow:\n  - step: ping\n    next: pong\n  - step: pong\n    next: [ { step: ping, when: "{{ workload.spin }}" } ]\n`);
  await api.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: cyc/parent }
workflow:
  - step: kid
    tool: { name: sub, kind: playbook, path: cyc/child, args: { spin: true } }
    next:
      - { step: handled, when: "{{ outcome.status == 'error' and outcome.error.code == 'step_cycle' }}" }
  - step: handled
`);
  const done = await api.wait(await api.run('cyc/parent'));
  expect(done).toMatchObject({ status: 'completed', error: null });
  const events = await api.events(done.execution_id);
  expect(events.filter((e) => e.event_type === 'step.enter').map((e) => e.step)).toEqual(['kid', 'handled']);
  const exit = events.find((e) => e.event_type === 'step.exit' && e.step === 'kid');
  expect(exit?.result?.error ?? exit?.error).toMatchObject({ code: 'step_cycle' });
});
