// A start's own priority is kept for what succeeds it, also when it is 5 (the default) over a
// playbook whose `priority` is another: a retry is claimed at the priority the execution ran with
// (docs/flow-control.md, "Priority and fairness"; src/engine/retry-execution.ts: "started as the
// old one was asked for"). Real server and database, no worker (commands stay PENDING).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const priorities = async (id: number) => (await db.query<{ priority: number }>('SELECT priority FROM core.command WHERE execution_id = $1', [id])).rows.map((r) => r.priority);

describe('a start at priority 5 of a playbook of priority 9', () => {
  it('is retried at 5, as it ran', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: urgent, path: flow/urgent }
priority: 9
workflow:
  - step: start
    tool: { name: t, kind: noop }
` })).status).toBe(201);
    for (const priority of [5, 2]) {
      const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/urgent', priority })).body.execution_id as number;
      expect(await priorities(id)).toEqual([priority]);
      expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'to retry' })).status).toBe(200);
      const retried = await http(t.url, 'POST', `/api/executions/${id}/retry`, {});
      expect(retried.status).toBe(201);
      expect(await priorities(retried.body.execution_id), `started at ${priority}`).toEqual([priority]);
      await http(t.url, 'POST', `/api/executions/${retried.body.execution_id}/cancel`, { reason: 'test over' });
    }
  });
});
