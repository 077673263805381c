// Found by the documentation audit (helper): docs/operations.md's cleanup names what it leaves
// alone (paused, queued: they "wait on purpose"), and a reader took an approval's wait for one of
// those. It is not: the spec's cleanup cancels every execution with no terminal event started
// over older_than_minutes ago, and a step waiting for a signal or a timer leaves its execution
// `running`. The doc now says so; this pins it on a real server (no worker: the waits are rows).
import { afterAll, beforeAll, expect, it } from 'vitest';
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

const waiting = (name: string, wait: string) =>
  `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: waiting/${name} }\nworkflow:\n  - step: start\n    wait: ${wait}\n`;

it('cancels an execution waiting for its approval (or a timer) once it started over older_than_minutes ago', async () => {
  const api = executionApi(t.url);
  await api.register(waiting('approve', '{ signal: approval, timeout: 24h, approval: { roles: [admin] } }'));
  await api.register(waiting('timer', '{ for: 1d }'));
  const approve = await api.run('waiting/approve');
  const timer = await api.run('waiting/timer');
  for (const id of [approve, timer]) {
    expect((await http(t.url, 'GET', `/api/executions/${id}`)).body).toMatchObject({ status: 'running', waits: [expect.objectContaining({ step: 'start' })] });
    await db.query(`UPDATE core.execution SET started_at = now() - interval '10 minutes' WHERE execution_id = $1`, [id]);
  }
  const dry = await http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 5, dry_run: true });
  expect(dry.body.execution_ids).toEqual(expect.arrayContaining([approve, timer]));
  const done = await http(t.url, 'POST', '/api/executions/cleanup', { older_than_minutes: 5 });
  expect(done.body.execution_ids).toEqual(expect.arrayContaining([approve, timer]));
  for (const id of [approve, timer]) expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status).toBe('cancelled');
});
