// bash expands the value of BASH_ENV (the file a non-interactive bash reads first) as it expands a
// prompt, command substitutions and all, and so does an interactive shell its ENV. A shell task's
// template output in such an assignment (`BASH_ENV={{ workload.profile }} bash deploy.sh`) was
// let through as data, where PS4's is refused: a payload `$(…)` ran in the task. It is refused now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderShellCommand } from '../../../src/dsl/render.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
}, 60_000);
afterAll(async () => stack?.close());

describe('an output in the value of BASH_ENV or ENV', () => {
  it('runs nothing from the payload of a deploy that names its profile', async () => {
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: deploy, path: audit/deploy_profile }
workflow:
  - step: start
    tool:
      - name: deploy
        kind: shell
        command: |
          printf 'echo deploying to "$TARGET"\\n' > deploy.sh
          BASH_ENV={{ workload.profile }} TARGET=staging bash deploy.sh
`);
    const execution = await stack.wait(await stack.run('audit/deploy_profile', { profile: '$(echo INJECTED >&2)' }));
    expect(JSON.stringify(execution)).not.toContain('INJECTED\\n');
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'template_error', message: expect.stringContaining('BASH_ENV') } });
  });

  it('is refused in an exported or interactive start-up file too', () => {
    for (const template of ['export BASH_ENV="{{ v }}"; bash run.sh', "ENV='{{ v }}' sh -i", 'BASH_ENV+={{ v }} bash run.sh']) {
      expect(() => renderShellCommand(template, { v: 'x' }, 'start.t.command'), template).toThrow(/the shell parses again/);
    }
    expect(renderShellCommand('TARGET={{ v }} bash run.sh', { v: '$(id)' }, 'start.t.command').command).toBe('TARGET="$SVC_TEMPLATE_1" bash run.sh');
  });
});
