// A command cancelled while a worker held it read as never claimed in its step's runs: the claim
// reaches the log with its first report, which came after the cancel (late, applied to nothing),
// so GET /api/executions/{id}/steps/{step} said worker_id null, claimed_at null, though the worker
// ran its http call. The run is still `cancelled`, and now names that worker and its claim time.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let s: TestStack;
let target: HttpTarget;
const held = new Map<string, ServerResponse>();
beforeAll(async () => {
  s = await startTestStack();
  target = await startHttpTarget(async (_req, res, recorded) => {
    if (recorded.path !== '/hold') return;
    held.set(String(recorded.query.n), res);
    await new Promise((resolve) => res.on('close', resolve));
  });
});
afterAll(async () => {
  for (const res of held.values()) res.destroy();
  await target?.close();
  await s?.close();
});

describe('a step whose command was cancelled while a worker held it', () => {
  it('lists the run cancelled, with the worker that held it and since when', async () => {
    await s.register(`apiVersion: svc/v1
metadata: { name: held_cancel, path: audit/held_cancel }
workflow:
  - step: call
    tool: { name: call, kind: http, url: "${target.url}/hold?n=1" }
`);
    const id = await s.run('audit/held_cancel');
    await until('the call is in flight', async () => held.has('1'), 10_000);
    expect((await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'stop' })).body).toMatchObject({ status: 'cancelled' });
    // The worker's report comes after the cancel: kept as late, applied to nothing.
    held.get('1')!.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    await until('the late report', async () => (await s.events(id)).some((e) => e.event_type === 'command.completed'), 10_000);
    const { rows } = await s.deps.db.query<{ worker_id: string; claimed_at: Date }>('SELECT worker_id, claimed_at FROM core.command WHERE execution_id = $1', [id]);
    const view = (await http(s.url, 'GET', `/api/executions/${id}/steps/call`)).body;
    expect(view.runs).toHaveLength(1);
    const run = view.runs[0] as Json;
    expect(run).toMatchObject({ status: 'cancelled', worker_id: rows[0].worker_id, finished_at: null });
    expect(run.claimed_at).toBe(rows[0].claimed_at.toISOString());
  });
});
