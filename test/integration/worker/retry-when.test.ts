import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workers: 1, concurrency: 2 });
});
afterAll(async () => s?.close());

async function runYaml(yaml: string) {
  const reg = await s.register(yaml);
  const id = await s.run(reg.path);
  const final = await s.wait(id);
  const events = await s.events(id);
  return { final, callError: events.find((e: Json) => e.event_type === 'call.error') };
}

const playbook = (path: string, when: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: retried, path: ${path} }
workflow:
  - step: start
    tool:
      name: flaky
      kind: shell
      command: "echo trying; exit 3"
      retry: { attempts: 3, delay_seconds: 0, when: "${when}" }
`;

describe('retry.when', () => {
  it('fails the task with a template error naming the field when it cannot be rendered', async () => {
    const { final, callError } = await runYaml(playbook('worker/retry-when-broken', 'outcome.data.nosuch.deeper'));
    expect(final.status).toBe('failed');
    expect(callError.error.code).toBe('template_error');
    expect(callError.error.message).toMatch(/^template error in start\.flaky\.retry\.when: /);
    expect(final.error.message).toMatch(/start\.flaky\.retry\.when/);
    // The broken condition stops the retrying: one attempt, not a silent give-up or three.
    expect(callError.context.attempts).toBe(1);
  });

  it('still retries while a valid condition holds, and stops when it does not', async () => {
    const retried = await runYaml(playbook('worker/retry-when-holds', "outcome.data.exit_code == 3"));
    expect(retried.callError.error.code).not.toBe('template_error');
    expect(retried.callError.context.attempts).toBe(3);
    const notRetried = await runYaml(playbook('worker/retry-when-false', "outcome.data.exit_code == 4"));
    expect(notRetried.callError.error.code).not.toBe('template_error');
    expect(notRetried.callError.context.attempts).toBe(1);
  });
});
