// A shell task's template output is refused in the script of `sh -c`, which the inner shell
// parses again as code. A shell option that takes an argument (`bash -o pipefail -c '…'`, the
// usual way to get pipefail that dash lacks; `-eo pipefail`, `-O extglob`, `--rcfile FILE`) or a
// `+e` before the `-c` made the escaper stop reading the command as a shell's: the output stood in
// the script, and a payload `$(…)` ran in the task. Such options now leave the `-c` to come.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderShellCommand } from '../../../src/dsl/render.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
}, 60_000);
afterAll(async () => stack?.close());

const render = (template: string) => renderShellCommand(template, { v: '$(id)' }, 'start.t.command');

describe("an output in a shell's -c script after the shell's options", () => {
  it('runs nothing from the payload in a bash -o pipefail script', async () => {
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: count_matches, path: audit/count_matches }
workflow:
  - step: start
    tool:
      - name: count
        kind: shell
        command: "bash -o pipefail -c 'printf \\"%s\\\\n\\" alpha beta | grep -c {{ workload.pattern }}'"
`);
    const execution = await stack.wait(await stack.run('audit/count_matches', { pattern: '$(echo INJECTED >&2; echo beta)' }));
    expect(JSON.stringify(execution)).not.toContain('INJECTED\\n');
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'template_error', message: expect.stringContaining('the shell parses again') } });
  });

  it('is refused whatever options come before the -c', () => {
    for (const template of [
      "bash -eo pipefail -c 'echo {{ v }}'",
      "bash --noprofile --norc -eo pipefail -c 'echo {{ v }}'",
      "sh -o errexit -c 'echo {{ v }}'",
      "sh +e -c 'echo {{ v }}'",
      "bash -O extglob -c 'echo {{ v }}'",
      "bash --rcfile /dev/null -c 'echo {{ v }}'",
      "sh -co errexit 'echo {{ v }}'",
    ]) {
      expect(() => render(template), template).toThrow(/the shell parses again/);
    }
  });

  it('is data as an argument after the script, or the name of a script file', () => {
    expect(render(`bash -o pipefail -c 'echo "$1"' sh {{ v }}`).command).toBe(`bash -o pipefail -c 'echo "$1"' sh "$SVC_TEMPLATE_1"`);
    expect(render('bash -o pipefail run.sh {{ v }}').command).toBe('bash -o pipefail run.sh "$SVC_TEMPLATE_1"');
  });
});
