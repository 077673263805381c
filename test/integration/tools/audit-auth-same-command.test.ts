// A task's `auth` may be a template, and the worker renders it over everything it has; but it may
// read the credential only when the server grants it, and the server names it by rendering the
// same template over what the command was issued with: no keychain, no outcome of a task of the
// same command (which runs after the grant). Such a playbook was registered without a word and its
// task failed `credential_not_granted` at every run ("credential 'api_auth' is not given to this
// command"). Registration now refuses it, naming the field; a name read from an earlier step, or
// from a task of an earlier command of the step (past a `playbook` task), is granted and used by a
// real `svc worker`.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const TOKEN = 'tok-granted-7f3a9c';

let target: HttpTarget;
let s: WorkerStack;
beforeAll(async () => {
  target = await startHttpTarget();
  s = await startWorkerStack({ workers: 1 });
  const r = await http(s.url, 'POST', '/api/credentials', { name: 'api_auth', type: 'bearer', data: { token: TOKEN } });
  expect(r.status).toBe(201);
  await s.register(`
apiVersion: svc/v1
metadata: { name: name_child, path: audit/name_child }
workflow: [ { step: start, tool: { name: say, kind: noop } } ]
`);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

it('refuses an auth that reads a task of its own command, or the keychain, naming the field', async () => {
  const r = await http(s.url, 'POST', '/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: same_command, path: audit/same_command }
keychain: [ { name: names, kind: http, endpoint: "http://127.0.0.1:9/names", scope: local } ]
workflow:
  - step: start
    tool:
      - { name: pick, kind: shell, command: "echo api_auth" }
      - { name: call, kind: http, url: "http://127.0.0.1:9/x", auth: "{{ tasks.pick.data.stdout | trim }}" }
      - { name: list, kind: mcp, endpoint: "http://127.0.0.1:9/mcp", method: tools/list, auth: "{{ keychain.names.cred }}" }
`,
  });
  expect(r.status).toBe(400);
  const paths = r.body.detail.problems.map((p: { path: string }) => p.path);
  expect(paths).toEqual(['workflow[0].tool[1].auth', 'workflow[0].tool[2].auth']);
  expect(r.body.detail.problems[0].message).toContain("task 'pick' runs in the same command");
});

it('grants a name read from an earlier step or from a task of an earlier command, and the task uses it', async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: granted, path: audit/granted }
workflow:
  - step: start
    tool: { name: pick, kind: shell, command: "echo api_auth" }
    next: two
  - step: two
    tool:
      - { name: from_step, kind: http, url: "{{ workload.base }}/echo", auth: "{{ steps.start.result.stdout | trim }}" }
      - { name: child, kind: playbook, path: audit/name_child }
      - { name: from_task, kind: http, url: "{{ workload.base }}/echo", auth: "{{ 'api_auth' if tasks.from_step.status == 'ok' else 'none' }}" }
`);
  const id = await s.run('audit/granted', { base: target.url });
  const final = await s.wait(id);
  expect(final.error).toBeNull();
  expect(final.status).toBe('completed');
  expect(target.requests.filter((q) => q.path === '/echo').map((q) => q.headers.authorization)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
}, 60_000);
