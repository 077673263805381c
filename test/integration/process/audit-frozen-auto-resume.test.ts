// A `svc server` starting beside another finds an interrupted execution (its command claimed by a
// worker nobody hears from) and auto-resume cancels it to restart it; the server is SIGSTOPped
// inside that cancel's transaction (its write waits for the execution's row, which the test
// holds, then runs while the process stands still), holding the auto-resume lease and the row.
// Meanwhile the claimed command's report arrives at the other server, which routes it once
// PostgreSQL has ended the frozen session. SIGCONTed, the frozen server acts on what it read:
// nothing is cancelled, no successor starts, and the execution completes with each step once.
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { http, type Json } from '../../helpers/http.ts';
import { heldPlaybook, ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
let b: ServerProcess;
beforeAll(async () => {
  // No reaper: the hand claim stays stranded for auto-resume to find.
  bed = await ServerProcesses.open({ SVC_AUTO_RESUME_MODE: 'restart', SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '2', SVC_COMMAND_REAPER_ENABLED: 'false' });
  b = await bed.server();
  // A pool beats, so b's own auto-resume runs now (on an empty database), not in the test.
  await bed.worker(b.base, 1);
  await until('b auto-resumed', async () => (await bed.db.query(`SELECT 1 FROM core.runtime WHERE kind = 'lease' AND name = 'auto_resume' AND status <> 'held'`)).rows.length > 0, 30_000, 200);
}, 60_000);
afterAll(async () => {
  await bed?.close();
});

it('an auto-resume frozen in its cancel, then resumed, cancels nothing the other server moved on and starts no successor', async () => {
  expect((await http(b.base, 'POST', '/api/catalog/playbook', { content: noopPlaybook('frozen/resume', 2) })).status).toBe(201);
  // The worker (one slot) is kept busy, so it beats but takes nothing until the hold goes.
  const hold = join(bed.dir, 'hold');
  await writeFile(hold, '');
  expect((await http(b.base, 'POST', '/api/catalog/playbook', { content: heldPlaybook('frozen/held', hold, bed.stopFile) })).status).toBe(201);
  const busy = (await http(b.base, 'POST', '/api/run/playbook', { path: 'frozen/held', payload: {} })).body.execution_id;
  await until('the worker busy', async () => (await bed.db.query(`SELECT 1 FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED', 'RUNNING')`, [busy])).rows.length > 0, 20_000, 100);
  const id = (await http(b.base, 'POST', '/api/run/playbook', { path: 'frozen/resume', payload: {} })).body.execution_id;
  const { rows } = await bed.db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
  const cmd: Json = await batchApi(b.base).claim(Number(rows[0].command_id), 'hand');
  const lock = new pg.Client({ connectionString: bed.database.url });
  await lock.connect();
  let a: ServerProcess | undefined;
  try {
    await lock.query('BEGIN');
    await lock.query('SELECT 1 FROM core.execution WHERE execution_id = $1 FOR UPDATE', [id]);
    a = await bed.server();
    await until("a's auto-resume cancel waiting for the row", async () => (await bed.db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows.length > 0, 30_000, 50);
    a.proc.kill('SIGSTOP');
    await lock.query('COMMIT');
  } finally {
    await lock.end();
  }
  try {
    // The report reaches b, which routes it once the frozen transaction is ended (503 until then).
    const report = { worker_id: 'hand', report_id: randomUUID(), events: commandReport(cmd).map((e) => ({ ...e, execution_id: id })) };
    const t0 = Date.now();
    await until('the report routed by b', async () => {
      const r = await http(b.base, 'POST', '/api/worker/report', report, asWorker);
      if (r.status !== 200 && r.status !== 503) throw new Error(`b answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.status === 200;
    }, 45_000, 250);
    console.log(`b routed the report after ${Date.now() - t0} ms of a's freeze`);
    await rm(hold);
    await until('the execution completed', async () => (await http(b.base, 'GET', `/api/executions/${id}`)).body.status === 'completed', 20_000, 200);
  } finally {
    a?.proc.kill('SIGCONT');
  }
  await until('a serves', async () => (await http(a!.base, 'GET', `/api/executions/${id}`)).status === 200, 20_000, 200);
  // What a's auto-resume does with its stale reading, once it runs again.
  await new Promise((r) => setTimeout(r, 3_000));
  const { rows: events } = await bed.db.query(`SELECT event_id, event_type, step FROM core.event WHERE execution_id = $1 ORDER BY event_id`, [id]);
  expect(events.map((r) => Number(r.event_id)), 'no gap').toEqual(events.map((_, i) => i + 1));
  expect(events.filter((r) => r.event_type === 'command.completed').map((r) => r.step)).toEqual(['s1', 's2']);
  expect(events.filter((r) => r.event_type === 'execution.cancelled')).toEqual([]);
  expect((await http(a!.base, 'GET', `/api/executions/${id}`)).body.status).toBe('completed');
  const { rows: successors } = await bed.db.query(`SELECT execution_id FROM core.event WHERE event_type = 'execution.started' AND context->>'resumed_from' = $1`, [String(id)]);
  expect(successors).toEqual([]);
}, 90_000);
