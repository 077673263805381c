// A looped `playbook` task whose child failed and is retried: the retry's child belongs to the same
// loop item. Its `child.started` named no item and no `loop.item` comes before it (the loop began
// that item long before), so GET /api/executions/{id}/steps/{step} answered `loop_index: null`
// for every retry's run and the console's Gantt drew the retry's child outside its item.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
}, 120_000);
afterAll(async () => s?.close());

it("each retry's child run keeps its loop item, in the step's runs and in the Gantt", async () => {
  // A child that fails at once: its one task calls a port nothing listens on.
  await s.register(`
apiVersion: svc/v1
metadata: { name: failing, path: audit/failing_child }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "http://127.0.0.1:9/nothing-listens" }
`);
  await s.register(`
apiVersion: svc/v1
metadata: { name: loop_retry, path: audit/loop_retry }
workflow:
  - step: kids
    loop: { in: [10, 20, 30], iterator: n, mode: parallel }
    tool: { name: kid, kind: playbook, path: audit/failing_child, retry: { attempts: 2, delay_seconds: 0.05 } }
`);
  const id = await s.run('audit/loop_retry');
  const execution = await s.wait(id);
  expect(execution.status).toBe('failed');
  const r = await http(s.url, 'GET', `/api/executions/${id}/steps/kids`);
  expect(r.status).toBe(200);
  const runs = r.body.runs as Json[];
  // Two children per item (the first attempt and its retry), each run naming its item.
  expect(runs).toHaveLength(6);
  const items = new Map<number, number>();
  for (const run of runs) {
    expect(run.loop_index, JSON.stringify(run)).toEqual(expect.any(Number));
    items.set(run.loop_index, (items.get(run.loop_index) ?? 0) + 1);
  }
  expect([...items.entries()].sort()).toEqual([[0, 2], [1, 2], [2, 2]]);
  const children = buildTimeline((await s.events(id)) as never, execution).bars.filter((b) => b.kind === 'child');
  expect(children).toHaveLength(6);
  for (const bar of children) {
    const run = runs.find((x) => x.child_execution_id === bar.childExecutionId);
    expect(bar.loopIndex).toBe(run?.loop_index);
  }
}, 60_000);
