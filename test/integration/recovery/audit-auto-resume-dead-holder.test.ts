// A server SIGKILLed while its auto-resume runs leaves the `auto_resume` lease held. The next
// server to start said "auto-resume: another server is doing it" and gave up, and the lease was
// held for 600 s, past RESUME_WINDOW_MINUTES (5): what the dead run had not handled was never
// resumed (an execution whose worker died with the first stop stayed running, its claim held by
// a worker nobody hears from). The lease is now renewed while a run works and held 30 s past its
// last renewal, and a server that finds it held waits for it and then looks itself.
// Real server processes on one database; the dead run is held inside its cancel by a row lock.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { batchApi, noopPlaybook } from '../../helpers/batch.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { beatAsAPool } from '../../helpers/interrupted.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
beforeAll(async () => {
  // No reaper: the hand claim stays stranded for auto-resume to find.
  bed = await ServerProcesses.open({ SVC_AUTO_RESUME_MODE: 'restart', SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '2', SVC_COMMAND_REAPER_ENABLED: 'false', SVC_LOG_LEVEL: 'info' });
}, 60_000);
afterAll(async () => {
  await bed?.close();
});

const leaseHeld = async () => (await bed.db.query(`SELECT 1 FROM core.runtime WHERE kind = 'lease' AND name = 'auto_resume' AND status = 'held'`)).rows.length > 0;

it('the next server resumes what a run killed while it held the lease had not', async () => {
  const first = await bed.server();
  // A pool beats (and claims nothing), so each server's auto-resume looks without waiting 60 s for one.
  expect((await http(first.base, 'POST', '/api/worker/pool/register', { name: 'beater', capacity: 1 }, asWorker)).status).toBe(200);
  const beat = beatAsAPool(first.base, { name: 'beater' }, 300);
  try {
  await until('the first auto-resume done', async () => (await bed.db.query(`SELECT 1 FROM core.runtime WHERE kind = 'lease' AND name = 'auto_resume' AND status <> 'held'`)).rows.length > 0, 30_000, 200);
  expect((await http(first.base, 'POST', '/api/catalog/playbook', { content: noopPlaybook('dead/resume', 1) })).status).toBe(201);
  const id: number = (await http(first.base, 'POST', '/api/run/playbook', { path: 'dead/resume', payload: {} })).body.execution_id;
  const { rows } = await bed.db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
  // Claimed by a worker that then says nothing: the claim a worker SIGKILLed with its server leaves.
  await batchApi(first.base).claim(Number(rows[0].command_id), 'hand');

  const lock = new pg.Client({ connectionString: bed.database.url });
  await lock.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('SELECT 1 FROM core.execution WHERE execution_id = $1 FOR UPDATE', [id]);
    const doomed = await bed.server();
    await until("the doomed server's auto-resume inside its cancel", async () => (await bed.db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows.length > 0, 30_000, 50);
    expect(await leaseHeld()).toBe(true);
    doomed.proc.kill('SIGKILL');
    await doomed.proc.exited;
    await lock.query('COMMIT');
  } finally {
    await lock.end();
  }
  expect(await leaseHeld(), 'the dead run left the lease held').toBe(true);

  const next = await bed.server();
  const successor = await until(
    'the execution restarted by the next server',
    async () => (await bed.db.query(`SELECT execution_id FROM core.event WHERE event_type = 'execution.started' AND context->>'resumed_from' = $1`, [String(id)])).rows[0]?.execution_id,
    90_000,
    500,
  );
  expect(next.proc.output()).toContain('auto-resume handled executions interrupted by the stop');
  expect((await http(next.base, 'GET', `/api/executions/${id}`)).body).toMatchObject({ status: 'cancelled', resumed_as: Number(successor) });
  await bed.worker(next.base, 1);
  await until('the successor completed', async () => (await http(next.base, 'GET', `/api/executions/${successor}`)).body.status === 'completed', 30_000, 200);
  const cancels = await bed.db.query(`SELECT 1 FROM core.event WHERE execution_id = $1 AND event_type = 'execution.cancelled'`, [id]);
  expect(cancels.rows).toHaveLength(1);
  } finally {
    await beat.stop();
  }
}, 180_000);
