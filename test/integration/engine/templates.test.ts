// Templates end to end, through a real server and worker: registration refuses a template that can
// never render (naming the field, storing nothing); run payloads reach shell commands as data
// through `env`, `| quote` and templates in the command's text, never as shell syntax; a sandbox escape fails on the server (arc
// `set`) and on the worker (task field) with a template error, and the process keeps working.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-templates-'));
  s = await startTestStack();
});
afterAll(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function catalogCount(): Promise<number> {
  return (await http(s.url, 'GET', '/api/catalog/playbooks')).body.count;
}

describe('registration', () => {
  it('refuses an unknown filter and a syntax error with 400 naming each field, and stores nothing', async () => {
    const before = await catalogCount();
    const r = await http(s.url, 'POST', '/api/catalog/playbook', {
      content: `apiVersion: svc/v1
metadata: { name: badtpl, path: tests/templates/bad }
workflow:
  - step: start
    tool: { kind: noop }
    next: second
  - step: second
    tool:
      - { name: a, kind: noop }
      - { name: b, kind: shell, command: "echo {{ workload.who | nope }}" }
    next: [ { step: start, when: "{{ vars.n < }}" } ]
`,
    });
    expect(r.status).toBe(400);
    expect(r.body.detail.message).toBe('Playbook validation failed');
    expect(r.body.detail.errors).toEqual([
      "workflow[1].tool[1].command: unknown filter 'nope' (line 1, column 24)",
      expect.stringMatching(/^workflow\[1\]\.next\[0\]\.when: unexpected token/),
    ]);
    expect(await catalogCount()).toBe(before);
  });
});

describe('shell tasks take data safely', () => {
  const playbook = `apiVersion: svc/v1
metadata: { name: shelldata, path: tests/templates/shell-data }
workload: { who: nobody }
workflow:
  - step: start
    tool:
      - name: via_env
        kind: shell
        command: 'printf "%s" "$WHO"'
        env: { WHO: "{{ workload.who }}" }
      - name: via_quote
        kind: shell
        command: "printf '%s' {{ workload.who | quote }}"
      - name: json_env
        kind: shell
        command: 'printf "%s" "$DATA"'
        env: { DATA: "{{ workload }}" }
      - name: pasted
        kind: shell
        command: "printf '%s' {{ workload.who }}"
      - name: pasted_in_quotes
        kind: shell
        command: 'printf "%s" "{{ workload.who }}"; printf "%s" ''{{ workload.who }}'''
      - name: pasted_in_heredoc
        kind: shell
        command: "cat <<EOF\\n{{ workload.who }}\\nEOF"
`;

  it('a payload full of shell syntax is printed as it is and runs nothing, through env, through quote and pasted in the command', async () => {
    await s.register(playbook);
    const payloads = [
      `x; touch ${dir}/pwned-$$`,
      `$(touch ${dir}/pwned-subst)`,
      `\`touch ${dir}/pwned-backtick\``,
      `'; touch ${dir}/pwned-quote; echo '`,
      `"; touch ${dir}/pwned-dquote; echo "`,
      `a\nb && touch ${dir}/pwned-newline`,
      '{{ 7 * 7 }}',
    ];
    for (const who of payloads) {
      const id = await s.run('tests/templates/shell-data', { who });
      const final = await s.wait(id);
      expect(final.status, JSON.stringify(final.error)).toBe('completed');
      const done = (await s.events(id)).find((e: Json) => e.event_type === 'command.completed');
      const tasks = done.result.tasks;
      expect(tasks.via_env.data.stdout).toBe(who);
      expect(tasks.via_quote.data.stdout).toBe(who);
      expect(JSON.parse(tasks.json_env.data.stdout)).toEqual({ who });
      // A template in the command's text: its output is an expansion of a variable that holds it.
      expect(tasks.pasted.data.stdout).toBe(who);
      expect(tasks.pasted_in_quotes.data.stdout).toBe(who + who);
      expect(tasks.pasted_in_heredoc.data.stdout).toBe(`${who}\n`);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a template in code another shell parses (sh -c's script, eval) fails the task naming the field, and runs nothing", async () => {
    await s.register(`apiVersion: svc/v1
metadata: { name: nested_shell, path: tests/templates/nested-shell }
workflow:
  - step: start
    tool: { name: inner, kind: shell, command: "sh -c 'echo {{ workload.who }}'" }
`);
    const id = await s.run('tests/templates/nested-shell', { who: `x; touch ${dir}/pwned-nested` });
    const final = await s.wait(id);
    expect(final).toMatchObject({ status: 'failed', error: { code: 'template_error', step: 'start' } });
    expect(final.error.message).toMatch(/^template error in start\.inner\.command: a template's output cannot stand in code the shell parses again/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('sandbox', () => {
  it('an escape fails with a template error on the worker and on the server, and both keep working', async () => {
    await s.register(`apiVersion: svc/v1
metadata: { name: escape, path: tests/templates/escape }
workflow:
  - step: start
    tool: { name: leak, kind: shell, command: "echo {{ range.constructor }}" }
`);
    const onWorker = await s.wait(await s.run('tests/templates/escape'));
    expect(onWorker).toMatchObject({ status: 'failed', error: { code: 'template_error', step: 'start' } });
    expect(onWorker.error.message).toBe("template error in start.leak.command: 'constructor' is not accessible in templates");

    await s.register(`apiVersion: svc/v1
metadata: { name: escape2, path: tests/templates/escape-server }
workflow:
  - step: start
    tool: { kind: noop }
    next: [ { step: end, set: { pid: "{{ workload.__proto__ }}" } } ]
  - step: end
`);
    const onServer = await s.wait(await s.run('tests/templates/escape-server'));
    expect(onServer).toMatchObject({ status: 'failed', error: { code: 'template_error', step: 'start' } });
    expect(onServer.error.message).toBe("template error in start.next[0].set.pid: '__proto__' is not accessible in templates");

    await s.register(`apiVersion: svc/v1
metadata: { name: fine, path: tests/templates/fine }
workload: { n: [3, 1, 2] }
workflow:
  - step: start
    tool: { name: sum, kind: shell, command: "echo {{ workload.n | sort | join('+') }}={{ workload.n | sum }}" }
`);
    const fine = await s.wait(await s.run('tests/templates/fine'));
    expect(fine).toMatchObject({ status: 'completed', result: { stdout: '1+2+3=6\n' } });
  });
});
