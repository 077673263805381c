// bash expands the value of BASH_ENV (and a prompt's, an interactive shell's ENV) as code, command
// substitutions and all. A template's output there in a command was refused, but the refusal
// said to pass the value in env:, and `env: { BASH_ENV: "{{ workload.profile }}" }` ran a payload
// `$(…)` all the same. Registration now refuses such an env: value, and the worker refuses an env:
// mapping a template makes whole that sets one; fixed values, and other variables, stay as they were.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
}, 60_000);
afterAll(async () => stack?.close());

const playbook = (path: string, env: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: deploy, path: ${path} }
workflow:
  - step: start
    tool:
      - name: deploy
        kind: shell
        env: ${env}
        command: |
          printf 'echo "deploying to $TARGET"\\n' > deploy.sh
          bash deploy.sh
`;

describe('a shell task whose env: sets a variable the shell expands as code', () => {
  it('is refused at registration when a template sets it, naming the variable', async () => {
    for (const name of ['BASH_ENV', 'PS4', 'ENV', 'PROMPT_COMMAND']) {
      const r = await http(stack.url, 'POST', '/api/catalog/playbook', { content: playbook(`audit/env_${name.toLowerCase()}`, `{ ${name}: "{{ workload.profile }}", TARGET: staging }`) });
      expect(r.status, name).toBe(400);
      expect(r.body.detail.problems).toEqual([expect.objectContaining({ path: `workflow[0].tool[0].env.${name}`, message: expect.stringContaining(`a template cannot set ${name}`) })]);
    }
  });

  it('runs nothing from the payload when a template makes the whole env', async () => {
    await stack.register(playbook('audit/env_whole', '"{{ workload.env }}"'));
    const execution = await stack.wait(await stack.run('audit/env_whole', { env: { BASH_ENV: '$(echo INJECTED >&2)', TARGET: 'staging' } }));
    expect(JSON.stringify(execution)).not.toContain('INJECTED\\n');
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'template_error', message: expect.stringContaining('a template cannot set BASH_ENV') } });
  });

  it('keeps a fixed start-up file and data in other variables', async () => {
    await stack.register(playbook('audit/env_fixed', '{ BASH_ENV: /dev/null, TARGET: "{{ workload.target }}" }'));
    const execution = await stack.wait(await stack.run('audit/env_fixed', { target: '$(echo INJECTED)' }));
    expect(execution).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(execution)).toContain('deploying to $(echo INJECTED)');
    await stack.register(playbook('audit/env_whole_plain', '"{{ workload.env }}"'));
    expect(await stack.wait(await stack.run('audit/env_whole_plain', { env: { TARGET: 'prod' } }))).toMatchObject({ status: 'completed' });
  });
});
