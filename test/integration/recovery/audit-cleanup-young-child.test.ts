// A cleanup's cancel cascades to the stale execution's children, a child started within the age
// included (a parent's late step): the answer (and the dry run before it) names it, so a cleanup
// cancels what it lists and nothing else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let db: pg.Client;

const one = (name: string, tool: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: young/${name} }\nworkflow:\n  - step: start\n    tool: ${tool}\n`;

beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

describe('cleanup of a stale parent whose child is young', () => {
  it('lists the child its cancel takes along, in the dry run and in the cancel', async () => {
    const api = executionApi(t.url);
    await api.register(one('grandchild', '{ name: n, kind: noop }'));
    await api.register(one('child', '{ name: g, kind: playbook, path: young/grandchild }'));
    await api.register(one('parent', '{ name: c, kind: playbook, path: young/child }'));
    // No worker runs here: the grandchild's command stays PENDING, the tree running.
    const parent = await api.run('young/parent');
    const child = (await db.query(`SELECT execution_id FROM core.execution WHERE parent_execution_id = $1`, [parent])).rows[0].execution_id;
    const grandchild = (await db.query(`SELECT execution_id FROM core.execution WHERE parent_execution_id = $1`, [child])).rows[0].execution_id;
    // Only the parent is old: its children started a moment ago (as a late step's would).
    await db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = $1`, [parent]);
    await db.query(`UPDATE core.event SET created_at = created_at - interval '10 minutes' WHERE execution_id = $1`, [parent]);

    const dry = await http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 5, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ cancelled_count: 3, execution_ids: [parent, child, grandchild] });
    expect(dry.body.message).toMatch(/^dry run: 1 execution with no terminal event started over 5 minutes ago and 2 executions they started would be cancelled/);
    expect(dry.body.executions.map((e: { parent_execution_id: number | null }) => e.parent_execution_id)).toEqual([null, parent, child]);

    const done = await http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 5 });
    expect(done.body).toMatchObject({ cancelled_count: 3, execution_ids: [parent, child, grandchild] });
    expect(done.body.message).toMatch(/^cancelled 1 execution with no terminal event started over 5 minutes ago and 2 executions they started$/);
    for (const id of [parent, child, grandchild]) expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status, `execution ${id}`).toBe('cancelled');
  });
});
