import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import type { Json } from '../../helpers/http.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

const types = (events: Json[]) => events.map((e: Json) => e.event_type);

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
    expect(done).toMatchObject({ status: 'completed', progress: 100 });
    expect(done.result.stdout).toBe('HI\n');
    const ev = types(await s.events(id));
    expect(ev[0]).toBe('execution.started');
    expect(ev.slice(-2)).toEqual(['workflow.completed', 'playbook.completed']);
    for (const t of ['step.enter', 'command.issued', 'command.claimed', 'command.started', 'call.done', 'command.completed', 'step.exit']) expect(ev).toContain(t);
    const ids = (await s.events(id)).map((e: Json) => e.event_id);
    expect(ids).toEqual(ids.map((_: unknown, i: number) => i + 1));
  });
});
