// A limited task's key (and a `playbook` task's path and args) may read the outcomes of the step's
// earlier tasks (`tasks.<name>`): the engine renders them as it issues that task, with those
// outcomes. Registration's simulation rendered them with no data, failed the step and warned that
// the step after it was reached by no path, though every run reaches it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http } from '../../helpers/http.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workers: 1 });
  expect((await http(s.url, 'PUT', '/api/limits/by-first', { concurrency: 1 })).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const playbook = (path: string, second: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: earlier_task, path: ${path} }
workflow:
  - step: start
    tool:
      - { name: first, kind: shell, command: "echo acme" }
      - ${second}
    next: fin
  - step: fin
    tool: { name: done, kind: noop }
`;

describe("a task reading an earlier task's outcome as it is issued", () => {
  it('as its limit key: no warning that the next step is unreachable, and a run reaches it on the key the first task printed', async () => {
    const r = await http(s.url, 'POST', '/api/catalog/playbook', {
      content: playbook('audit/earlier-key', `{ name: second, kind: noop, limit: { name: by-first, key: "{{ tasks.first.data.stdout | trim }}" } }`),
    });
    expect(r.status).toBe(201);
    expect(r.body.warnings).toEqual([]);
    const id = await s.run('audit/earlier-key');
    expect((await s.wait(id, 30_000)).status).toBe('completed');
    expect((await s.events(id)).filter((e) => e.event_type === 'step.enter').map((e) => e.step)).toEqual(['start', 'fin']);
    expect((await http(s.url, 'GET', '/api/limits/by-first')).body.key_list.map((k: { key: string }) => k.key)).toEqual(['acme']);
  });

  it("as a child's args: no warning that the next step is unreachable", async () => {
    await s.register(`apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: child, path: audit/earlier-child }\nworkflow:\n  - step: start\n    tool: { name: c, kind: noop }\n`);
    const r = await http(s.url, 'POST', '/api/catalog/playbook', {
      content: playbook('audit/earlier-args', `{ name: second, kind: playbook, path: audit/earlier-child, args: { tenant: "{{ tasks.first.data.stdout | trim }}" } }`),
    });
    expect(r.status).toBe(201);
    expect(r.body.warnings).toEqual([]);
  });
});
