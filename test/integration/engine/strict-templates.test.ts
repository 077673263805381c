// Issue 30 item 1 end to end: a template that reads what is not there is refused at registration
// when its root is static (naming the expression, the field, the line), and is a template_error
// outcome naming the expression when it renders on a worker; `| default` and `is defined` hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

describe('strict templates at registration', () => {
  it('refuses a misspelt root, an undeclared input and a step that cannot have run, naming expression, field and line; stores nothing', async () => {
    const before = (await http(s.url, 'GET', '/api/catalog/playbooks')).body.count;
    const r = await http(s.url, 'POST', '/api/catalog/playbook', {
      content: `apiVersion: svc/v1
kind: Playbook
metadata: { name: strict, path: tests/strict/registration }
inputs:
  endpoint: { type: string, default: "http://127.0.0.1:1" }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo {{ workload.endpont }}" }
    next: second
  - step: second
    tool: { name: b, kind: shell, command: "echo {{ wrkload.x }} {{ steps.third.result }}" }
    next: third
  - step: third
    tool: { name: c, kind: noop }
`,
    });
    expect(r.status).toBe(400);
    const problems: Json[] = r.body.detail.problems;
    const text = JSON.stringify(problems);
    expect(text).toContain('endpont');
    expect(text).toContain('wrkload');
    expect(text).toContain('third');
    for (const p of problems) {
      expect(p.path).toMatch(/^workflow\[[01]\]\.tool/);
      expect(p.line).toBeGreaterThan(0);
    }
    const endpont = problems.find((p) => String(p.message).includes('endpont'));
    expect(endpont).toMatchObject({ path: 'workflow[0].tool.command', line: 8 });
    expect((await http(s.url, 'GET', '/api/catalog/playbooks')).body.count).toBe(before);
  });
});

describe('strict templates at run time', () => {
  it("a missing attribute of a step's result is a template_error naming the expression and the missing part", async () => {
    await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: strict-run, path: tests/strict/run }
workflow:
  - step: a
    tool: { name: t, kind: shell, command: "printf '{\\"x\\": 1}'" }
    next: b
  - step: b
    tool: { name: u, kind: shell, command: "echo {{ steps.a.result.nope }}" }
`);
    const final = await s.wait(await s.run('tests/strict/run'));
    expect(final).toMatchObject({ status: 'failed', error: { code: 'template_error', step: 'b' } });
    expect(final.error.message).toContain('steps.a.result.nope');
    expect(final.error.message).toContain('nope');
  });

  it('| default and is defined keep working for what may be absent', async () => {
    await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: strict-default, path: tests/strict/default }
workload: { present: yes }
workflow:
  - step: a
    tool: { name: t, kind: noop }
    next: b
  - step: b
    tool:
      name: u
      kind: shell
      command: "echo {{ steps.a.result.nope | default('fallback') }} {{ 'defined' if steps.a.result.nope is defined else 'absent' }}"
`);
    const final = await s.wait(await s.run('tests/strict/default'));
    expect(final, JSON.stringify(final.error)).toMatchObject({ status: 'completed', result: { stdout: 'fallback absent\n' } });
  });
});
