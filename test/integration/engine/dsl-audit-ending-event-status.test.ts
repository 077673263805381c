// An event's `status` is the execution's status after it (the events API's schema), and an
// execution is running until its terminal event. The events that the transition ending an
// execution records before its terminal pair (the last step.exit, a loop.done, the command.cancelled
// of a branch still in flight, even step.enter of a step entered and failed at once) said
// `completed` or `failed`, as if the execution had ended before them.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

const ENDING = new Set(['workflow.completed', 'workflow.failed', 'playbook.completed', 'playbook.failed']);

async function statuses(name: string, workflow: string): Promise<{ final: Json; events: [string, string][] }> {
  await s.register(`apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: audit/ending/${name} }\nworkflow:\n${workflow}`);
  const id = await s.run(`audit/ending/${name}`);
  const final = await s.wait(id);
  return { final, events: (await s.events(id)).map((e: Json) => [e.event_type, e.status]) };
}

function expectRunningUntilTheEnd(events: [string, string][], status: string): void {
  const cut = events.findIndex(([type]) => ENDING.has(type));
  expect(cut).toBeGreaterThan(0);
  expect(events.slice(0, cut).filter(([, st]) => st !== 'running')).toEqual([]);
  expect(events.slice(cut)).toEqual([[events[cut][0], status], [events[cut + 1][0], status]]);
}

it('says running on every event before the terminal pair of a completed execution', async () => {
  const { final, events } = await statuses('done', `  - step: start
    tool: { name: a, kind: noop }
    next: loop
  - step: loop
    loop: { in: "{{ [1, 2] }}" }
    tool: { name: b, kind: noop }
`);
  expect(final.status).toBe('completed');
  expect(events.map(([type]) => type)).toContain('loop.done');
  expectRunningUntilTheEnd(events, 'completed');
});

it('says running on the events before the terminal pair of a failed execution, a step entered and failed at once too', async () => {
  const { final, events } = await statuses('failed', `  - step: start
    loop: { in: "{{ 'not a list' }}" }
    tool: { name: a, kind: noop }
`);
  expect(final).toMatchObject({ status: 'failed', error: { code: 'loop_input' } });
  expect(events.map(([type]) => type)).toEqual(['execution.started', 'step.enter', 'step.exit', 'workflow.failed', 'playbook.failed']);
  expectRunningUntilTheEnd(events, 'failed');
});

it('says running on a step that ends as the execution starts', async () => {
  const { final, events } = await statuses('instant', `  - step: start
    next: end
  - step: end
`);
  expect(final.status).toBe('completed');
  expectRunningUntilTheEnd(events, 'completed');
});
