// Two cleanups at once (cron and an operator, two consoles) list the same stale executions, and
// each execution is cancelled by one of them. The other found it cancelled already, and still
// answered it as its own: both answers said `cancelled 2 executions`, the log line 'cleanup
// cancelled stuck executions' was written twice, though each execution holds one cancel. An
// answer lists what its cleanup cancelled (docs/operations.md), and a child its parent's cancel
// took along. Real server and database; a row lock holds both cleanups after their listing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let db: pg.Client;
let holder: pg.Client;

const one = (name: string, tool: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: twice/${name} }\nworkflow:\n  - step: start\n    tool: ${tool}\n`;

beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  holder = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  await holder.connect();
});
afterAll(async () => {
  await holder?.end();
  await db?.end();
  await t?.close();
});

async function waitingOnLocks(n: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`);
    if (rows[0].n >= n) return;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error(`fewer than ${n} statements wait on the held row`);
}

describe('two cleanups at once', () => {
  it('each execution is answered by the one cleanup that cancelled it (a child with its parent)', async () => {
    const api = executionApi(t.url);
    await api.register(one('child', '{ name: n, kind: noop }'));
    await api.register(one('parent', '{ name: c, kind: playbook, path: twice/child }'));
    // No worker runs here: the commands stay PENDING, the executions running.
    const single = await api.run('twice/child');
    const parent = await api.run('twice/parent');
    const child: number = (await db.query(`SELECT execution_id FROM core.execution WHERE parent_execution_id = $1`, [parent])).rows[0].execution_id;
    const all = [single, parent, child];
    await db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = ANY($1)`, [all]);
    await db.query(`UPDATE core.event SET created_at = created_at - interval '10 minutes' WHERE execution_id = ANY($1)`, [all]);

    // Both list all three, then wait for the first one's row: neither has cancelled anything yet.
    const first = Math.min(single, parent);
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM core.execution WHERE execution_id = $1 FOR UPDATE`, [first]);
    const answers = [http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 5 }), http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 5 })];
    await waitingOnLocks(2);
    await holder.query('COMMIT');
    const [a, b] = await Promise.all(answers);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);

    for (const id of all) expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status, `execution ${id}`).toBe('cancelled');
    const listed: number[] = [...a.body.execution_ids, ...b.body.execution_ids];
    expect(listed.sort((x, y) => x - y)).toEqual([...all].sort((x, y) => x - y));
    expect(a.body.cancelled_count + b.body.cancelled_count).toBe(3);
    // A child goes with the parent its cleanup cancelled.
    const withParent = [a.body, b.body].find((x) => x.execution_ids.includes(parent));
    expect(withParent.execution_ids).toContain(child);
    const lines = t.logs.filter((l) => l.includes('cleanup cancelled stuck executions'));
    expect(lines.length).toBeLessThanOrEqual(2);
  });
});
