// POST /api/executions/cleanup reads its options from the JSON body only: `?dry_run=true` in the
// query string was dropped and the cleanup cancelled for real. A query parameter is now refused
// with 422 naming it, and nothing is cancelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
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

describe('cleanup options in the query string', () => {
  it('are refused with 422 naming them; nothing is cancelled', async () => {
    const api = executionApi(t.url);
    await api.register(`apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: query/one }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n`);
    // No worker runs here: its command stays PENDING, the execution running.
    const id = await api.run('query/one');
    await db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = $1`, [id]);

    for (const [query, first] of [['dry_run=true', 'dry_run'], ['older_than_minutes=60&dry_run=true', 'older_than_minutes']]) {
      const r = await http(t.url, 'POST', `/api/executions/cleanup?${query}`, { dry_run: true });
      expect(r.status, query).toBe(422);
      expect(r.body.detail.errors, query).toEqual([`${first}: is not read from the query string: send older_than_minutes and dry_run in the JSON body`]);
    }
    expect((await http(t.url, 'POST', '/api/executions/cleanup?dry_run=true')).status).toBe(422);
    expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status).toBe('running');
    // The body says it, as ever.
    expect((await http(t.url, 'POST', '/api/executions/cleanup', { dry_run: true })).body).toMatchObject({ execution_ids: [id] });
  });
});
