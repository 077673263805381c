// A failed attempt's output over SVC_TASK_OUTPUT_BYTES is kept as a preview (src/cap-output.ts).
// The preview was the first N UTF-16 units of the output's JSON: cut inside an emoji it ended with
// half a surrogate pair, the server refused the whole report (422, a lone surrogate cannot be
// stored), and the execution failed `report_rejected` with the task's error, attempts and output
// lost; and text of multi-byte characters kept up to 4 times the bytes the limit names.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';

const LIMIT = 64 * 1024; // the in-process worker's and the server's default SVC_TASK_OUTPUT_BYTES

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workers: 1, workerOptions: { shell: UNSANDBOXED_SHELL } });
}, 120_000);
afterAll(async () => s?.close());

it('a capped output cut among 4-byte characters is stored, whole characters, within the limit in UTF-8 bytes', async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: emoji, path: audit/emoji }
workflow:
  - step: start
    tool: { name: talk, kind: shell, command: "printf '{{ workload.pad }}'; yes '😀' | head -n 40000 | tr -d '\\\\n'; exit 3", retry: { attempts: 2 } }
`);
  // With and without one character before the emoji: one of the two cuts a pair at any offset.
  for (const pad of ['', 'x']) {
    const id = await s.run('audit/emoji', { pad });
    expect(await s.wait(id)).toMatchObject({ status: 'failed', error: { code: 'exit_code' } });
    const attempt = (await s.events(id)).find((e: Json) => e.event_type === 'call.attempt');
    expect(attempt?.result.output).toMatchObject({ truncated: true, bytes: expect.any(Number) });
    const preview = String(attempt.result.output.preview);
    expect(preview.isWellFormed()).toBe(true);
    expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(LIMIT);
    expect(Buffer.byteLength(preview)).toBeGreaterThan(LIMIT - 4);
    const r = await http(s.url, 'GET', `/api/executions/${id}/steps/start`);
    expect(r.status).toBe(200);
    const attempts = r.body.runs[0].tasks[0].attempts as Json[];
    expect(attempts.map((a) => a.status)).toEqual(['error', 'error']);
    for (const a of attempts) {
      expect(String(a.output.preview).isWellFormed()).toBe(true);
      expect(Buffer.byteLength(String(a.output.preview))).toBeLessThanOrEqual(LIMIT);
    }
  }
}, 60_000);
