// A limit a playbook names but nobody defined holds its work until it is defined (the first of
// docs/flow-control.md's caveats: a typo queues for ever). `svc status` said of such an execution
// `queued on limit tenatn key "acme"` and of such a command `room on limit … since …`, as of a
// full limit: nothing said the limit did not exist. GET /api/executions/{id} now says `defined`
// in `flow` and in each of `limit_waits`, and `svc status` says the limit is not defined.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { ExecutionDetail, statusText } from '../../../src/cli/execution-status-view.ts';
import * as v from 'valibot';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const playbook = (path: string, flow: string, limit: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: undefined-limit, path: ${path} }
${flow}
workflow:
  - step: start
    tool: { name: x, kind: noop${limit} }
`;

async function started(path: string): Promise<v.InferOutput<typeof ExecutionDetail>> {
  const r = await http(t.url, 'POST', '/api/run/playbook', { path });
  expect(r.status).toBe(200);
  return v.parse(ExecutionDetail, (await http(t.url, 'GET', `/api/executions/${r.body.execution_id}`)).body);
}

it('a queued execution and a waiting command say their limit is not defined; a defined one says it is', async () => {
  for (const [path, flow, limit] of [
    ['audit/undef-conc', 'concurrency: { limit: tenatn, key: "acme" }', ''],
    ['audit/undef-task', '', ', limit: { name: partner-apl, key: "acme" }'],
  ]) {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: playbook(path, flow, limit) })).status).toBe(201);
  }
  const queued = await started('audit/undef-conc');
  expect(queued.flow).toMatchObject({ limit: 'tenatn', key: 'acme', admitted_at: null, defined: false });
  expect(statusText(queued, undefined)).toMatch(/flow\s+queued on limit tenatn key "acme" \(not defined: its work waits until it is\), priority 5/);

  const waiting = await started('audit/undef-task');
  expect(waiting.limit_waits).toMatchObject([{ step: 'start', limit: 'partner-apl', key: 'acme', defined: false }]);
  expect(statusText(waiting, { start: { status: 'active' } })).toMatch(/start\s+active\s+room on limit partner-apl key "acme" \(not defined: its work waits until it is\) since /);

  // Defined now: the next start's admission says so (its key has room: it holds a slot).
  expect((await http(t.url, 'PUT', '/api/limits/tenatn', { concurrency: 5 })).status).toBe(200);
  const admitted = await started('audit/undef-conc');
  expect(admitted.flow).toMatchObject({ limit: 'tenatn', defined: true });
  expect(statusText(admitted, undefined)).not.toContain('not defined');
});
