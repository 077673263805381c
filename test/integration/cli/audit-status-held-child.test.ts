// svc status of a paused execution called a child start the pause holds a command: a step whose
// `playbook` task was to start its child read 'held (paused): 1 command issued once resumed',
// though no command is issued for it (the resume starts a child execution, which no worker claims).
// The view now counts held child starts apart (held_children) and svc status says what they are.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startTestApp();
  env = { SVC_SERVER_URL: s.url };
  for (const [name, body] of [
    ['kid', '  - step: gate\n    wait: { signal: go }\n'],
    ['parent', '  - step: first\n    wait: { signal: go }\n    next: kids\n  - step: kids\n    tool: { name: k, kind: playbook, path: heldkid/kid }\n'],
  ]) {
    const r = await http(s.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1\nmetadata: { name: ${name}, path: heldkid/${name} }\nworkflow:\n${body}` });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
});
afterAll(async () => {
  await s?.close();
});
const rowOf = (text: string, step: string) => text.split('\n').find((l) => l.startsWith(`${step} `));

it("a held child start is said as one: 'held (paused): 1 child execution started once resumed'", async () => {
  const id = Number((await http(s.url, 'POST', '/api/run/playbook', { path: 'heldkid/parent' })).body.execution_id);
  await until('first waits', async () => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps?.first?.status === 'waiting');
  expect((await runSvc(['pause', String(id)], env)).code).toBe(0);
  expect((await runSvc(['signal', String(id), 'go'], env)).code).toBe(0);
  await until('kids is entered', async () => (await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps?.kids?.status === 'active');
  expect((await http(s.url, 'GET', `/api/executions/${id}/state`)).body.steps.kids).toMatchObject({ held: 1, held_children: 1 });
  const out = await runSvc(['status', String(id)], env);
  expect(out.code, out.stderr).toBe(0);
  expect(rowOf(out.stdout, 'kids')).toMatch(/^kids\s+active\s+held \(paused\): 1 child execution started once resumed$/);
  expect(((await http(s.url, 'GET', `/api/executions?parent=${id}`)).body.executions as Json[])).toEqual([]);
  expect((await runSvc(['resume', String(id)], env)).code).toBe(0);
  await until('the child starts', async () => ((await http(s.url, 'GET', `/api/executions?parent=${id}`)).body.executions as Json[]).length === 1);
  await http(s.url, 'POST', `/api/executions/${id}/cancel`, {});
});
