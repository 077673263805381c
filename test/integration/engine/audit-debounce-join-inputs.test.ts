// A start that joins an open debounce window gives its payload to the window's execution, which
// runs the version the window opened with. The start was checked against the newest version's
// `inputs:` only: registered since with `n` left undeclared, a start of {n: "x"} joined a window of the
// version that declares `n` an integer, and that version ran with n = "x". It is refused now, 422
// naming the field as that version's inputs say, and the window keeps the payload it had.
// Likewise its admission was the newest version's: one without `concurrency` joined the window of a
// version that names the limit `one` (concurrency 1), and that execution ran beside the one
// holding the limit. It now waits on the limit its version names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workers: 1 });
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const version = (inputs: string, word: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: debounced, path: audit/debounce-inputs }
inputs:
  ${inputs}
debounce: { seconds: 3 }
workflow:
  - step: start
    tool: { name: say, kind: shell, command: "echo ${word} {{ workload.n | default('-') }}" }
`;
const start = (payload: Record<string, unknown>) => http(s.url, 'POST', '/api/run/playbook', { path: 'audit/debounce-inputs', payload });

describe("a start joining a debounce window opened by an older version", () => {
  it("is checked against the inputs of the version the window's execution runs", async () => {
    await s.register(version('n: { type: integer, required: true }', 'v1'));
    const opened = await start({ n: 1 });
    expect(opened.status).toBe(200);
    // The newer version leaves n undeclared (any value passes it).
    await s.register(version('m: { type: string }', 'v2'));
    const joining = await start({ n: 'x' });
    expect(joining.status, JSON.stringify(joining.body)).toBe(422);
    expect(joining.body.detail).toMatchObject({ code: 'invalid_inputs', errors: ['workload.n: must be integer, got string'] });
    // One that fits both versions joins as before.
    const fits = await start({ n: 2 });
    expect(fits.body).toMatchObject({ execution_id: opened.body.execution_id, debounced: true });
    const ended = await s.wait(opened.body.execution_id, 30_000);
    expect(ended).toMatchObject({ status: 'completed', catalog_id: opened.body.catalog_id });
    expect(ended.result.stdout).toBe('v1 2\n');
  });

  it("waits on the concurrency limit of the version the window's execution runs", async () => {
    expect((await http(s.url, 'PUT', '/api/limits/one', { concurrency: 1 })).status).toBe(200);
    const held = (extra: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: audit/debounce-limit }
${extra}workflow:
  - step: start
    wait: { signal: go, timeout: 1h }
`;
    const run = async () => (await http(s.url, 'POST', '/api/run/playbook', { path: 'audit/debounce-limit', payload: {} })).body;
    await s.register(held('concurrency: { limit: one }\n'));
    const holder = await run();
    await s.register(held('concurrency: { limit: one }\ndebounce: { seconds: 1 }\n'));
    const opened = await run();
    await s.register(held('debounce: { seconds: 1 }\n'));
    expect(await run()).toMatchObject({ execution_id: opened.execution_id, debounced: true });
    const view = async (id: number) => (await http(s.url, 'GET', `/api/executions/${id}`)).body;
    expect((await view(holder.execution_id)).status).toBe('running');
    // The window closes a second after the join; the admitter looks at least once a second.
    const closed = Date.parse((await view(opened.execution_id)).flow.not_before);
    const seen = await until('the window closed and the admitter looked, or the execution admitted', async () => {
      const v = await view(opened.execution_id);
      return v.status !== 'queued' || Date.now() > closed + 4_000 ? v : undefined;
    }, 30_000);
    expect(seen).toMatchObject({ status: 'queued', flow: { limit: 'one', admitted_at: null } });
    // Once the holder ends, it is admitted on its limit.
    expect((await http(s.url, 'POST', `/api/executions/${holder.execution_id}/signals/go`, { payload: {} })).status).toBe(202);
    await until('admitted after the holder ended', async () => (await view(opened.execution_id)).status === 'running', 30_000);
    expect((await http(s.url, 'POST', `/api/executions/${opened.execution_id}/signals/go`, { payload: {} })).status).toBe(202);
    expect((await s.wait(opened.execution_id, 30_000)).status).toBe('completed');
  });
});
