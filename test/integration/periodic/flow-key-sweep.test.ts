// Idle flow keys forgotten (src/periodic/flow-key-sweep.ts, migrations/0032) on a real server,
// worker process and database: a key idle for a day with nothing on it goes, one holding a slot,
// with a command waiting, with an execution queued, or used within the day stays; work on a
// forgotten key makes it again; and a limited command inserted while the sweep runs, before or
// after the sweep locks its key, keeps a key row a claim can join; such an insert keeps no claim
// from the key, and keeps its limit from being deleted.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOW_KEY_FORGET_AFTER_S, sweepFlowKeys } from '../../../src/periodic/flow-key-sweep.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

let t: TestApp;
let worker: WorkerProcess;
let a: pg.Client;
let b: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  worker = await startWorkerProcess(t.url, { concurrency: 2, env: { SVC_WORKER_TOKEN: t.workerToken } });
  a = new pg.Client({ connectionString: t.databaseUrl });
  b = new pg.Client({ connectionString: t.databaseUrl });
  await Promise.all([a.connect(), b.connect()]);
  expect((await http(t.url, 'PUT', '/api/limits/tenant', { concurrency: 2 })).status).toBe(200);
  for (const [path, task, flow] of [
    ['keys/tenant', 'limit: { name: tenant, key: "{{ workload.k }}" }', ''],
    // A named limit not defined has no room: its commands wait, its starts queue.
    ['keys/undefined', 'limit: { name: nowhere, key: "{{ workload.k }}" }', ''],
    ['keys/queued', '', 'concurrency: { limit: nowhere-too, key: "{{ workload.k }}" }\n'],
  ]) {
    const content = `apiVersion: svc/v1\nmetadata: { name: k, path: ${path} }\n${flow}workload: { k: a }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop${task ? `, ${task}` : ''} }\n`;
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
  }
});
afterAll(async () => {
  await worker?.stop();
  await Promise.all([a?.end(), b?.end()]);
  await t?.close();
});

async function run(path: string, k: string): Promise<number> {
  const res = await http(t.url, 'POST', '/api/run/playbook', { path, payload: { k } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.execution_id;
}

async function completed(id: number): Promise<void> {
  await until(`execution ${id} completed`, async () => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status === 'completed', 15_000);
}

async function keys(): Promise<string[]> {
  const { rows } = await a.query<{ k: string }>(`SELECT name || '/' || key AS k FROM core.flow_key ORDER BY 1`);
  return rows.map((r) => r.k);
}

/** Makes every key (or those of `only`) look idle for two days. */
async function age(only?: string[]): Promise<void> {
  await a.query(`UPDATE core.flow_key SET served_at = now() - interval '2 days', refilled_at = now() - interval '2 days' WHERE $1::text[] IS NULL OR name || '/' || key = ANY($1::text[])`, [only ?? null]);
}

describe('idle flow keys', () => {
  it('forgets a key idle for a day with nothing on it; keeps the held, the waited on, the queued on and the recent; work on it makes it again', async () => {
    for (const k of ['idle', 'held', 'recent']) await completed(await run('keys/tenant', k));
    await run('keys/undefined', 'waited');
    const queued = await run('keys/queued', 'q');
    expect((await http(t.url, 'GET', `/api/executions/${queued}`)).body.status).toBe('queued');
    await age();
    await a.query(`UPDATE core.flow_key SET running = 1 WHERE name = 'tenant' AND key = 'held'`);
    // Used 23 hours ago: not yet a day.
    await a.query(`UPDATE core.flow_key SET served_at = now() - make_interval(secs => $1), refilled_at = now() - make_interval(secs => $1) WHERE key = 'recent'`, [FLOW_KEY_FORGET_AFTER_S - 3600]);
    expect(await keys()).toEqual(['nowhere-too/q', 'nowhere/waited', 'tenant/held', 'tenant/idle', 'tenant/recent']);
    expect(await sweepFlowKeys(t.deps)).toBe(1);
    expect(await keys()).toEqual(['nowhere-too/q', 'nowhere/waited', 'tenant/held', 'tenant/recent']);
    expect(t.logs.some((l) => l.includes('idle flow keys forgotten'))).toBe(true);
    // The next run finds nothing more; the forgotten key's next work runs and makes it again, as new.
    expect(await sweepFlowKeys(t.deps)).toBe(0);
    await completed(await run('keys/tenant', 'idle'));
    const { rows } = await a.query(`SELECT running, served_at > now() - interval '1 minute' AS served FROM core.flow_key WHERE name = 'tenant' AND key = 'idle'`);
    expect(rows).toEqual([{ running: 0, served: true }]);
    // Once the held key gives its slot back and a day passes, it goes too.
    await a.query(`UPDATE core.flow_key SET running = 0 WHERE name = 'tenant' AND key = 'held'`);
    await age(['tenant/held']);
    expect(await sweepFlowKeys(t.deps)).toBe(1);
    expect(await keys()).not.toContain('tenant/held');
  });

  it('a limited command inserted while the sweep runs keeps its key, whichever locks the key first', async () => {
    const id = await run('keys/tenant', 'race');
    await completed(id);
    const { rows: [c] } = await a.query<{ catalog_id: string }>(`SELECT catalog_id FROM core.command WHERE execution_id = $1`, [id]);
    const insert = (q: pg.Client, seq: number, key: string) =>
      q.query(`INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input, limit_name, limit_key) VALUES ($1, $2, $3, 'start', 'PENDING', '{}', 'tenant', $4) RETURNING command_id`, [id, c.catalog_id, seq, key]);
    const status = async (commandId: string) => (await a.query<{ status: string }>(`SELECT status FROM core.command WHERE command_id = $1`, [commandId])).rows[0].status;
    await worker.stop();

    // The command's insert first: its transaction holds the key, which the sweep skips.
    await age(['tenant/race']);
    await a.query('BEGIN');
    const first = (await insert(a, 100, 'race')).rows[0].command_id;
    expect(await sweepFlowKeys(t.deps)).toBe(0);
    await a.query('COMMIT');
    expect(await keys()).toContain('tenant/race');

    // The sweep first: it has locked the idle key and, its snapshot blind to the command, deletes it;
    // the insert waits for it, then makes the key again.
    await a.query(`UPDATE core.command SET status = 'COMPLETED' WHERE command_id = $1`, [first]);
    await age(['tenant/race']);
    await b.query('BEGIN');
    expect((await b.query(`SELECT 1 FROM core.flow_key WHERE name = 'tenant' AND key = 'race' FOR UPDATE SKIP LOCKED`)).rowCount).toBe(1);
    const inserting = insert(a, 101, 'race');
    await new Promise((r) => setTimeout(r, 300));
    expect((await b.query(`DELETE FROM core.flow_key WHERE name = 'tenant' AND key = 'race'`)).rowCount).toBe(1);
    await b.query('COMMIT');
    const second = (await inserting).rows[0].command_id;
    expect(await keys()).toContain('tenant/race');
    // A claim joins the key: the command is taken.
    worker = await startWorkerProcess(t.url, { concurrency: 2, env: { SVC_WORKER_TOKEN: t.workerToken } });
    await until('the command claimed', async () => (await status(second)) !== 'PENDING', 15_000);
  });

  it('a limited command being inserted keeps no claim from its key, and its limit from being deleted', async () => {
    await worker.stop();
    const waiting = await run('keys/tenant', 'busy');
    const { rows: [c] } = await a.query<{ command_id: string; catalog_id: string }>(`SELECT command_id, catalog_id FROM core.command WHERE execution_id = $1`, [waiting]);
    await a.query(`INSERT INTO core.flow_key (name, key) VALUES ('spare', 'x')`);
    expect((await http(t.url, 'PUT', '/api/limits/spare', { concurrency: 1 })).status).toBe(200);
    // A start's write in flight: it has inserted a command on each key and not committed.
    await a.query('BEGIN');
    for (const [seq, name, key] of [[200, 'tenant', 'busy'], [201, 'spare', 'x']]) {
      await a.query(`INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input, limit_name, limit_key) VALUES ($1, $2, $3, 'start', 'PENDING', '{}', $4, $5)`, [waiting, c.catalog_id, seq, name, key]);
    }
    const claimed = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w-busy', max: 1, wait_ms: 0 }, asWorker);
    expect(claimed.body.commands.map((x: { command_id: number }) => x.command_id)).toEqual([Number(c.command_id)]);
    const del = await http(t.url, 'DELETE', '/api/limits/spare');
    expect(del.status).toBe(409);
    expect(del.body.detail.code).toBe('limit_in_use');
    await a.query('COMMIT');
    // Committed, the command waits on the limit and its key: still in use.
    expect((await http(t.url, 'DELETE', '/api/limits/spare')).status).toBe(409);
    expect((await http(t.url, 'GET', '/api/limits/spare')).body).toMatchObject({ waiting: 1, key_list: [{ key: 'x', waiting: 1 }] });
  });
});
