// An event's `status` is the execution's status after it, and events after an execution.cancelled
// say `cancelled` (test/integration/engine/dsl-audit-ending-event-status.test.ts). A child cancelled
// with its parent (the cascade delivers its execution.cancelled to its inbox) recorded the
// command.cancelled of its step after it as `running`: GET /api/events of the child, and the
// console's event list, showed a running execution after its cancel.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => s?.close());

it('says cancelled on every event of a cascaded child from its execution.cancelled on', async () => {
  // No worker: the child's command waits, pending, for the cancel to cancel it.
  const api = executionApi(s.url);
  await api.register(`
apiVersion: svc/v1
metadata: { name: kid, path: audit/cascade_status/kid }
workflow:
  - step: start
    tool: { name: n, kind: noop }
`);
  await api.register(`
apiVersion: svc/v1
metadata: { name: parent, path: audit/cascade_status/parent }
workflow:
  - step: start
    tool: { name: k, kind: playbook, path: audit/cascade_status/kid }
`);
  const parent = await api.run('audit/cascade_status/parent');
  const child = await until('the child waits for a worker', async () => {
    const kids = (await http(s.url, 'GET', `/api/executions?parent=${parent}`)).body.executions as Json[];
    return kids[0] && (await http(s.url, 'GET', `/api/executions/${kids[0].execution_id}/state`)).body.pending_commands === 1 && (kids[0].execution_id as number);
  }, 10_000);
  expect((await http(s.url, 'POST', `/api/executions/${parent}/cancel`, {})).body).toMatchObject({ status: 'cancelled' });
  expect(await api.wait(child)).toMatchObject({ status: 'cancelled' });

  for (const id of [parent, child]) {
    const events = (await api.events(id)).map((e: Json): [string, string] => [e.event_type, e.status]);
    const cut = events.findIndex(([type]) => type === 'execution.cancelled');
    if (id === child) expect(events.slice(cut).map(([type]) => type)).toEqual(['execution.cancelled', 'command.cancelled']);
    expect(events.slice(cut).filter(([, st]) => st !== 'cancelled'), `execution ${id}: ${JSON.stringify(events)}`).toEqual([]);
    expect(events.slice(0, cut).filter(([, st]) => st !== 'running'), `execution ${id}`).toEqual([]);
  }
});
