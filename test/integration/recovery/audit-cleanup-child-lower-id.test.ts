// A cleanup cancels parents before their children, by the parent link: an id is no order of them.
// A start's id may come from a block its server fetched ahead (actors/start-prelude-cache.ts)
// while its child's comes from the sequence when the child starts; with the sequence's values
// below that block (another server's range, a node's own range under Citus: docs/scaling.md) the
// child has the lower id. Taken in id order, the child was cancelled first: its end failed its
// parent's playbook task, and the parent ended `failed` before its cleanup, which then did not
// cancel it. Real server, database and id allocation; the sequence is moved to make the ranges.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let db: pg.Client;

const one = (name: string, tool: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: lowid/${name} }\nworkflow:\n  - step: start\n    tool: ${tool}\n`;
const HIGH = 1_000_000;
const LOW = 500;

beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

describe('cleanup of a parent whose child has the lower id', () => {
  it('cancels the parent first: both end cancelled by the cleanup, listed parent first', async () => {
    const api = executionApi(t.url);
    await api.register(one('child', '{ name: n, kind: noop }'));
    await api.register(one('parent', '{ name: c, kind: playbook, path: lowid/child }'));
    await api.register(one('single', '{ name: n, kind: noop }'));
    // Two starts within a second: the second fetches a block of two ids, and this server keeps
    // the one it did not use (for 10 s) for its next start.
    await db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [HIGH]);
    const warm = [await api.run('lowid/single'), await api.run('lowid/single')];
    await db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [LOW]);
    // No worker runs here: the child's command stays PENDING, the tree running.
    const parent = await api.run('lowid/parent');
    const child: number = (await db.query(`SELECT execution_id FROM core.execution WHERE parent_execution_id = $1`, [parent])).rows[0].execution_id;
    expect(parent).toBeGreaterThan(HIGH);
    expect(child).toBeLessThan(parent);
    for (const id of warm) expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'not this test' })).status).toBe(200);
    await db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = ANY($1)`, [[parent, child]]);
    await db.query(`UPDATE core.event SET created_at = created_at - interval '10 minutes' WHERE execution_id = ANY($1)`, [[parent, child]]);

    const dry = await http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 5, dry_run: true });
    expect(dry.body).toMatchObject({ cancelled_count: 2, execution_ids: [parent, child] });
    const done = await http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 5 });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ cancelled_count: 2, execution_ids: [parent, child] });
    for (const id of [parent, child]) {
      const e = (await http(t.url, 'GET', `/api/executions/${id}`)).body;
      expect(e.status, `execution ${id}`).toBe('cancelled');
    }
    const cancel = (await api.events(parent)).find((e: { event_type: string }) => e.event_type === 'execution.cancelled');
    expect(cancel).toMatchObject({ context: { reason: 'cleanup' } });
  });
});
