// GET /api/executions/{id}/steps/{step} reads at most MAX_STEP_EVENTS of a step's events and says
// `truncated` when the step has more: it said so for a step with exactly that many, whose runs
// were whole. The step's events are made up to the bound with rows of a type no view reads.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_STEP_EVENTS } from '../../../src/api/step-runs.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

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

/** Appends `n` events of step `start` to execution `id`, after its last. */
async function pad(id: number, n: number): Promise<void> {
  await db.query(
    `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, step)
     SELECT $1, m.last + g, m.catalog_id, 'audit.padding', 'running', 'start'
       FROM (SELECT max(event_id) AS last, max(catalog_id) AS catalog_id FROM core.event WHERE execution_id = $1) m, generate_series(1, $2) g`,
    [id, n],
  );
}

it('a step with exactly the bound of events is not truncated; one more is', async () => {
  const api = executionApi(t.url);
  await api.register(`
apiVersion: svc/v1
metadata: { name: padded, path: audit/padded }
workflow:
  - step: start
    tool: { name: q, kind: shell, command: "true" }
`);
  // No worker here: the execution stays at its first step, its command pending.
  const id = await api.run('audit/padded');
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.event WHERE execution_id = $1 AND step = 'start'`, [id]);
  await pad(id, MAX_STEP_EVENTS - rows[0].n);
  const whole = await http(t.url, 'GET', `/api/executions/${id}/steps/start`);
  expect(whole.status).toBe(200);
  expect(whole.body.truncated).toBe(false);
  await pad(id, 1);
  const more = await http(t.url, 'GET', `/api/executions/${id}/steps/start`);
  expect(more.status).toBe(200);
  expect(more.body.truncated).toBe(true);
});
