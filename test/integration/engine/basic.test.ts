import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import type { Json } from '../../helpers/http.ts';

// An in-process worker pool, as `svc start` runs one (test/integration/engine/features.test.ts runs
// the same engine through `svc worker` processes).
let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

describe('engine basics', () => {
  it('runs a two-step shell playbook to completion with the full event sequence', async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: two, path: tests/two }
workload: { greeting: hello }
workflow:
  - step: start
    tool: { name: say, kind: shell, command: "echo {{ workload.greeting }}" }
    next: end
  - step: end
    tool: { name: shout, kind: shell, command: "echo {{ steps.start.result.stdout | trim | upper }}" }
`);
    const id = await s.run('tests/two', { greeting: 'hi' });
    const done = await s.wait(id);
    expect(done).toMatchObject({ status: 'completed', progress: 100, error: null, path: 'tests/two' });
    expect(done.result).toEqual({ exit_code: 0, stdout: 'HI\n', stderr: '' });
    const events = await s.events(id);
    const step = (name: string) => ['step.enter', 'command.issued', 'command.claimed', 'command.started', 'call.done', 'command.completed', 'step.exit'].map((t) => `${t}:${name}`);
    expect(events.map((e: Json) => (e.step ? `${e.event_type}:${e.step}` : e.event_type))).toEqual([
      'execution.started',
      ...step('start'),
      ...step('end'),
      'workflow.completed',
      'playbook.completed',
    ]);
    expect(events.map((e: Json) => e.event_id)).toEqual(events.map((_: unknown, i: number) => i + 1));
    // The payload merged over the workload is recorded as the execution's input.
    expect(events[0].context.input).toMatchObject({ workload: { greeting: 'hi' }, args: { greeting: 'hi' } });
    // Every worker event names the in-process pool that ran it.
    const reported = events.filter((e: Json) => ['command.claimed', 'command.started', 'call.done', 'command.completed'].includes(e.event_type));
    expect(new Set(reported.map((e: Json) => e.worker_id))).toEqual(new Set([s.workers[0].name]));
    expect(events.at(-1).result).toEqual(done.result);
  });
});
