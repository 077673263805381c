// `svc run --wait` on a terminal showed a loop step as `now: many` for as long as the loop ran:
// a thousand items over half an hour read the same at the first item as at the last. The live
// line now says how far it is, `now: many (2/6 items)`, from the step states (GET /state), read
// about once a second while a step runs.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLEAR_LINE, terminalView } from '../../../src/cli/progress-view.ts';
import { RunApi } from '../../../src/cli/run-api.ts';
import { watchExecution } from '../../../src/cli/watch-execution.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { Capture } from '../../helpers/capture.ts';

const LOOP = `apiVersion: svc/v1
kind: Playbook
metadata: { name: items, path: cli/audit/items }
workflow:
  - step: many
    loop: { in: "{{ [1, 2, 3, 4, 5, 6] }}", iterator: n, mode: sequential }
    tool: { name: call, kind: http, url: "{{ workload.base }}/delay/600" }
`;

let s: TestStack;
let target: HttpTarget;
beforeAll(async () => {
  s = await startTestStack();
  target = await startHttpTarget();
  await s.register(LOOP);
});
afterAll(async () => {
  await s?.close();
  await target?.close();
});

it("the live line counts a running loop's items done", async () => {
  const api = new RunApi(s.url);
  const id = await s.run('cli/audit/items', { base: target.url });
  const out = Object.assign(new Capture(), { columns: 120, isTTY: true });
  const outcome = await watchExecution(api, id, 'cli/audit/items', { view: terminalView(out), t0: performance.now(), signal: new AbortController().signal });
  expect(outcome.kind).toBe('terminal');
  const lines = out.text.split(CLEAR_LINE).filter((l) => l.includes('now: many'));
  const counts = new Set(lines.map((l) => /now: many \((\d)\/6 items\)/.exec(l)?.[1]));
  // Seen part way, not only at its ends: some of the items done, some not.
  expect([...counts].filter((c) => c !== undefined && c !== '0').length, lines.join('\n')).toBeGreaterThan(1);
  expect(counts.has(undefined)).toBe(false);
});
