// A `playbook` task with timeout_seconds: its timeout is a timer set with the child's start and
// called off (no event) when the child finishes. The Gantt kept that timer's bar open until the
// step's run ended: a child that had finished long ago still showed its timeout `running` while
// another item's child ran, and once the step ended the bar stretched to its end, `cancelled`.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
}, 120_000);
afterAll(async () => s?.close());

it("ends a child's timeout timer when the child finishes, not when its step does", async () => {
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: kid, path: audit/timeout_kid }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: [ { step: hold, when: "{{ args.hold }}" } ]
  - step: hold
    wait: { signal: go }
`);
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: audit/timeout_parent }
workflow:
  - step: kids
    loop: { in: [quick, held], iterator: k, mode: parallel }
    tool: { name: kid, kind: playbook, path: audit/timeout_kid, args: { hold: "{{ k == 'held' }}" }, timeout_seconds: 600 }
`);
  const id = await s.run('audit/timeout_parent');
  const started = (await http(s.url, 'GET', `/api/executions/${id}`)).body as Json;
  // The quick child finishes; the held one waits for its signal.
  const events = await until('the quick child finished', async () => {
    const all = await s.events(id);
    return all.some((e) => e.event_type === 'child.finished') ? all : undefined;
  }, 20_000, 50);
  const timeouts = (bars: ReturnType<typeof buildTimeline>['bars']) => bars.filter((b) => b.kind === 'wait' && b.label === 'kid: timeout');
  const children = (bars: ReturnType<typeof buildTimeline>['bars']) => bars.filter((b) => b.kind === 'child');
  const live = buildTimeline(events as ExecutionEvent[], { started_at: started.started_at, finished_at: null }).bars;
  const [quick, held] = children(live);
  expect([quick.status, held.status]).toEqual(['ok', 'running']);
  // What runs now: the held child and its timeout; the quick child's timeout was called off with it.
  expect(timeouts(live).map((b) => [b.status, b.end])).toEqual([
    ['cancelled', quick.end],
    ['running', null],
  ]);

  const heldId = held.childExecutionId!;
  expect((await http(s.url, 'POST', `/api/executions/${heldId}/signals/go`, { payload: {} })).status).toBe(202);
  const execution = await s.wait(id);
  expect(execution.status).toBe('completed');
  const all = buildTimeline((await s.events(id)) as ExecutionEvent[], execution).bars;
  const step = all.find((b) => b.kind === 'step')!;
  const ended = children(all);
  const timers = timeouts(all);
  expect(timers.map((b) => b.end)).toEqual(ended.map((c) => c.end));
  // The quick child's timer is not drawn to the end of the step that waited for the held one.
  expect(timers[0].end!).toBeLessThan(step.end!);
}, 60_000);
