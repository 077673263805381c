// A `playbook` task is run by the server (it starts a child execution), not by a worker, so a
// worker's `auth` never applies to it. DESIGN.md lists it as a field of every task kind:
// registration stores such a playbook and warns that it has no effect (it was silent before).
// `retry` and `timeout_seconds` do hold (the server retries and bounds the child:
// child-task-retry-timeout.test.ts): they warn nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http, type Json } from '../../helpers/http.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
  // The child is there before its parents: a child path not in the catalog is a warning of its own
  // (audit-child-path-warning.test.ts), which these cases do not look for.
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: child, path: audit/child }
workflow:
  - step: start
    tool: { name: c, kind: noop }
`);
});
afterAll(async () => s?.close());

const parent = (path: string, task: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: ${path} }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: audit/child, ${task} }
`;

async function registered(yaml: string): Promise<{ status: number; warnings: Json[] }> {
  const r = await http(s.url, 'POST', '/api/catalog/playbook', { content: yaml });
  return { status: r.status, warnings: r.body.warnings ?? [] };
}

describe('a playbook task takes no worker auth', () => {
  it('stores timeout_seconds on a playbook task without a warning: it bounds the child', async () => {
    const r = await registered(parent('audit/child-timeout', 'timeout_seconds: 0.5'));
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([]);
  });

  it('stores retry on a playbook task (in a list of tasks too) without a warning: it retries the child', async () => {
    const r = await registered(`apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: audit/child-retry }
workflow:
  - step: start
    tool:
      - { name: first, kind: noop, retry: { attempts: 2 } }
      - { name: kid, kind: playbook, path: audit/child, retry: { attempts: 3, delay_seconds: 0.01 } }
`);
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([]);
  });

  it('stores auth on a playbook task with a warning: no worker resolves it, the child\'s own tasks name their credentials', async () => {
    const r = await registered(parent('audit/child-auth', 'auth: no_such_auth'));
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([expect.stringMatching(/^workflow\[0\]\.tool\.auth has no effect .*a playbook task's child uses the credentials its own tasks name$/)]);
  });

  it('still runs a playbook task without them: the step carries the child outcome', async () => {
    await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: child, path: audit/child }
workflow:
  - step: start
    tool: { name: c, kind: noop }
`);
    const reg = await s.register(parent('audit/child-plain', 'args: { n: 1 }'));
    const id = await s.run(reg.path);
    const done = await s.wait(id);
    expect(done).toMatchObject({ status: 'completed', error: null, result: { status: 'completed', result: null } });
  });

  it('fails the task when its args template renders to no mapping, starting no child (code error)', async () => {
    await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: child, path: audit/child }
workflow:
  - step: start
    tool: { name: c, kind: noop }
`);
    const reg = await s.register(parent('audit/child-args', 'args: "{{ workload.params }}"'));
    for (const params of [[1, 2], 'n=1', null]) {
      const id = await s.run(reg.path, { params });
      const done = await s.wait(id);
      expect(done.status, JSON.stringify(params)).toBe('failed');
      expect(done.error).toEqual({ code: 'error', step: 'start', message: expect.stringContaining('kid.args must render to a mapping') });
      const children = await http(s.url, 'GET', `/api/executions?parent=${id}`);
      expect(children.body.executions).toEqual([]);
    }
  });
});
