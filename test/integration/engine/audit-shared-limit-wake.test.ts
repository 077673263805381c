// A limit shared by one playbook's executions (its `concurrency`) and another's tasks (a task's
// `limit`): when an admitted execution ends, its slot is free, and a claimer waiting for a command
// of that key is woken at once (docs/flow-control.md: a limit's commands "wait for the workers'
// claims, woken when a key has room"), not left until its long poll ends. Real server and
// database, no worker process: a long-polling claim stands for one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const register = async (content: string) => expect((await http(t.url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;

describe("an admitted execution's end", () => {
  it("wakes a claimer waiting for a command of the key's limit", async () => {
    expect((await http(t.url, 'PUT', '/api/limits/exports', { concurrency: 1 })).status).toBe(200);
    // The holder waits on a timer: it holds its slot and has no command.
    await register(`apiVersion: svc/v1
metadata: { name: holder, path: flow/shared-holder }
concurrency: { limit: exports, key: acme }
workflow:
  - step: start
    wait: { for: 1h }
`);
    await register(`apiVersion: svc/v1
metadata: { name: task, path: flow/shared-task }
workflow:
  - step: start
    tool: { name: export, kind: noop, limit: { name: exports, key: acme } }
`);
    const holder = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/shared-holder' })).body.execution_id as number;
    expect(await statusOf(holder)).toBe('running');
    const waiting = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/shared-task' })).body.execution_id as number;
    expect((await http(t.url, 'GET', `/api/executions/${waiting}`)).body.limit_waits).toMatchObject([{ limit: 'exports', key: 'acme' }]);

    const t0 = performance.now();
    const claim = http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w-shared', max: 1, wait_ms: 10_000 }, asWorker);
    await new Promise((r) => setTimeout(r, 300));
    expect((await http(t.url, 'POST', `/api/executions/${holder}/cancel`, { reason: 'done' })).status).toBe(200);
    const claimed = await claim;
    const waited = performance.now() - t0;
    expect(claimed.body.commands.map((c: { execution_id: number }) => c.execution_id)).toEqual([waiting]);
    expect(waited, 'the claim was woken by the freed slot, not by the end of its long poll').toBeLessThan(3_000);
    expect((await http(t.url, 'POST', `/api/executions/${waiting}/cancel`, { reason: 'test over' })).status).toBe(200);
  });
});
