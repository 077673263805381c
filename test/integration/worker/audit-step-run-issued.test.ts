// GET /api/executions/{id}/steps/{step} on a real server and worker: a command that waited for a
// free worker said nothing of it. A parallel loop of two 0.6 s items on a one-slot worker issues
// both at once; the second is claimed only when the first ends, and its run read claimed, started
// and finished times only, as if it had begun then: the 0.6 s it was queued was nowhere but in the
// raw events. Its run now says when it was issued.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';

const LOOP = `apiVersion: svc/v1
kind: Playbook
metadata: { name: queued, path: audit/step-run-issued }
workflow:
  - step: many
    loop: { in: "{{ [1, 2] }}", iterator: n, mode: parallel }
    tool: { name: nap, kind: shell, command: "sleep 0.6" }
    next: hold
  - step: hold
    wait: { for: 1s }
`;

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ concurrency: 1, workerOptions: { shell: UNSANDBOXED_SHELL } });
  await s.register(LOOP);
});
afterAll(async () => {
  await s?.close();
});

it('a command run says when it was issued: the second item waited for the one slot', async () => {
  const id = await s.run('audit/step-run-issued', {});
  expect((await s.wait(id)).status).toBe('completed');
  const { status, body } = await http(s.url, 'GET', `/api/executions/${id}/steps/many`);
  expect(status).toBe(200);
  const runs: { loop_index: number; issued_at: string | null; claimed_at: string; started_at: string; finished_at: string }[] = body.runs;
  expect(runs.map((r) => r.loop_index)).toEqual([0, 1]);
  for (const r of runs) {
    expect(r.issued_at).toEqual(expect.any(String));
    expect(Date.parse(r.claimed_at)).toBeGreaterThanOrEqual(Date.parse(r.issued_at ?? ''));
  }
  // Both issued in one transition; the second claimed once the first had run its 0.6 s.
  expect(runs[1].issued_at).toBe(runs[0].issued_at);
  expect(Date.parse(runs[1].claimed_at) - Date.parse(runs[1].issued_at ?? '')).toBeGreaterThanOrEqual(500);
  expect(Date.parse(runs[1].claimed_at)).toBeGreaterThanOrEqual(Date.parse(runs[0].finished_at) - 50);

  // A wait is issued as it begins: no queue before it.
  const holdAnswer = (await http(s.url, 'GET', `/api/executions/${id}/steps/hold`)).body;
  const hold = holdAnswer.runs[0];
  expect(hold, JSON.stringify(holdAnswer)).toBeDefined();
  expect(hold.issued_at).toBe(hold.started_at);
});
