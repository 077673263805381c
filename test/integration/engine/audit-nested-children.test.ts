// `playbook` tasks start their children in the unit of work that decides them, a child's own
// first step too, so a chain of children that start at once is folded in one unit, a round per
// level (each level's path and id are read before the fold is redone). The rounds counted against
// the unit's 8 attempts: a chain 8 deep answered the start with a 500 ("the fold lacked a read")
// and started nothing, and one started by a later step failed its worker's report for ever (the
// execution stayed running); a playbook that starts itself did the same, with no end. Chains now
// fold to any depth up to the limit of nesting (32 levels under the root), and a task that would
// start a child past it fails with code child_too_deep, which ends a runaway recursion.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http } from '../../helpers/http.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

const playbook = (path: string, workflow: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: nested, path: ${path} }
workflow:
${workflow}`;

const DEPTH = 12;

beforeAll(async () => {
  // nest/1 starts nest/2, ... nest/12 runs a noop: 11 levels of children under nest/1.
  for (let n = 1; n <= DEPTH; n++) {
    await s.register(
      playbook(
        `nest/${n}`,
        n === DEPTH ? '  - step: start\n    tool: { kind: noop }\n' : `  - step: start\n    tool: { name: kid, kind: playbook, path: nest/${n + 1} }\n`,
      ),
    );
  }
});

it('starts a chain of children 11 deep at once and completes it', async () => {
  const r = await http(s.url, 'POST', '/api/run/playbook', { path: 'nest/1', payload: {} });
  expect(r.status).toBe(200);
  const done = await s.wait(r.body.execution_id);
  expect(done).toMatchObject({ status: 'completed', error: null, result: { status: 'completed' } });
});

it('completes such a chain started by a later step (its worker\'s report is taken)', async () => {
  await s.register(playbook('nest/after', '  - step: start\n    tool: { kind: noop }\n    next: deep\n  - step: deep\n    tool: { name: kid, kind: playbook, path: nest/1 }\n'));
  const done = await s.wait(await s.run('nest/after'));
  expect(done).toMatchObject({ status: 'completed', error: null });
});

it('ends a playbook that starts itself: the child past 32 levels is not started', async () => {
  await s.register(playbook('nest/self', '  - step: start\n    tool: { name: me, kind: playbook, path: nest/self }\n'));
  const r = await http(s.url, 'POST', '/api/run/playbook', { path: 'nest/self', payload: {} });
  expect(r.status).toBe(200);
  const done = await s.wait(r.body.execution_id);
  expect(done).toMatchObject({ status: 'failed', error: { code: 'child_too_deep', step: 'start' } });
  const all = (await http(s.url, 'GET', `/api/executions?path=nest/self&limit=100`)).body.executions as { status: string; root_execution_id: number }[];
  const tree = all.filter((e) => e.root_execution_id === r.body.execution_id);
  // The root and its 32 levels of children, every one failed.
  expect(tree).toHaveLength(33);
  expect(new Set(tree.map((e) => e.status))).toEqual(new Set(['failed']));
});

it('lets a recursion that ends before the limit complete', async () => {
  await s.register(
    playbook(
      'nest/countdown',
      `  - step: start
    next:
      - { step: deeper, when: "{{ workload.n > 0 }}" }
  - step: deeper
    tool: { name: kid, kind: playbook, path: nest/countdown, args: { n: "{{ workload.n - 1 }}" } }
`,
    ),
  );
  const done = await s.wait(await s.run('nest/countdown', { n: 20 }));
  expect(done).toMatchObject({ status: 'completed', error: null });
});
