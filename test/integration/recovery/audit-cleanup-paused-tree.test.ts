// The cleanup leaves paused and queued executions alone (docs/operations.md: an operator paused
// it, a limit holds it; they wait on purpose), yet a stale parent whose child an operator had
// paused was cancelled, and its cancel took the paused child along (listed among 'the executions
// they started'); a stale child of a paused parent was cancelled too, which failed the paused
// parent's step. A tree that holds a paused or queued execution is now left whole, as auto-resume
// reads a tree; other stale trees are cancelled as before.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

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

const get = async (path: string): Promise<Json> => (await http(t.url, 'GET', path)).body;
const post = (path: string, body: unknown = {}) => http(t.url, 'POST', path, body);

it('leaves a stale tree whole when one of it is paused, and cancels the others', async () => {
  const api = executionApi(t.url);
  await api.register(`apiVersion: svc/v1
metadata: { name: kid, path: paused_tree/kid }
workflow:
  - step: gate
    wait: { signal: go }
`);
  await api.register(`apiVersion: svc/v1
metadata: { name: parent, path: paused_tree/parent }
workflow:
  - step: call
    tool: { name: c, kind: playbook, path: paused_tree/kid }
`);
  const tree = async () => {
    const parent = await api.run('paused_tree/parent');
    const child = await until('the child waits', async () => {
      const [kid] = (await get(`/api/executions?parent=${parent}`)).executions as Json[];
      return kid && (await get(`/api/executions/${kid.execution_id}`)).waits.length === 1 && Number(kid.execution_id);
    }, 10_000);
    await db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = ANY($1::bigint[])`, [[parent, child]]);
    return { parent, child };
  };
  const childPaused = await tree();
  expect((await post(`/api/executions/${childPaused.child}/pause`)).status).toBe(200);
  const parentPaused = await tree();
  expect((await post(`/api/executions/${parentPaused.parent}/pause`)).status).toBe(200);
  const stale = await tree();

  const dry = (await post('/api/executions/cleanup', { older_than_minutes: 5, dry_run: true })).body;
  expect(dry.execution_ids).toEqual([stale.parent, stale.child]);
  const done = (await post('/api/executions/cleanup', { older_than_minutes: 5 })).body;
  expect(done.execution_ids).toEqual([stale.parent, stale.child]);
  expect(done.message).toBe('cancelled 2 executions with no terminal event started over 5 minutes ago');
  const status = async (id: number) => (await get(`/api/executions/${id}`)).status;
  expect([await status(childPaused.parent), await status(childPaused.child)]).toEqual(['running', 'paused']);
  expect([await status(parentPaused.parent), await status(parentPaused.child)]).toEqual(['paused', 'running']);
  expect([await status(stale.parent), await status(stale.child)]).toEqual(['cancelled', 'cancelled']);
});
