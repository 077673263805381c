// A claim is recorded in the log once, with the first report of that claim. A worker that sends
// command.heartbeat before command.started (the command stays CLAIMED) had a command.claimed
// record written with every heartbeat: a batch of 256 heartbeats stored 512 events, the
// console's trace got a `claimed` mark per heartbeat and `svc logs` a claim line per heartbeat.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asWorker } from '../../helpers/auth.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(noopPlaybook('batch/heartbeats', 2));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function claimedExecution(worker: string): Promise<{ id: number; cmd: Json }> {
  const id = await ex.run('batch/heartbeats');
  const row = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING' ORDER BY seq LIMIT 1`, [id]);
  return { id, cmd: await b.claim(Number(row.rows[0].command_id), worker) };
}

const heartbeat = (cmd: Json, i: number) => ({ command_id: cmd.command_id, attempt: cmd.attempt, step: cmd.step, event_type: 'command.heartbeat', context: { i } });

/** The claims recorded in the log for `commandId`, as (attempt, worker) pairs. */
async function claimRecords(id: number, commandId: number): Promise<string[]> {
  const r = await db.query(`SELECT context->>'attempt' AS attempt, context->>'worker_id' AS worker FROM core.event WHERE execution_id = $1 AND command_id = $2 AND event_type = 'command.claimed' ORDER BY event_id`, [id, commandId]);
  return r.rows.map((x) => `${x.attempt}:${x.worker}`);
}

describe('command.claimed', () => {
  it('is recorded once for a claim whose batch holds heartbeats before its start', async () => {
    const { id, cmd } = await claimedExecution('w1');
    const events = [...Array.from({ length: 5 }, (_, i) => heartbeat(cmd, i)), ...commandReport(cmd)];
    const accepted = await b.post({ execution_id: id, worker_id: 'w1', events }, asWorker);
    expect(accepted.status).toBe(202);
    expect((await b.settled(accepted.body.request_id)).state).toBe('completed');
    // Before: five records, one per heartbeat (the command stays CLAIMED until its start).
    expect(await claimRecords(id, cmd.command_id)).toEqual(['1:w1']);
    // The batch's ids hold its items, and nothing else was added for them but the one claim.
    const types = (await db.query(`SELECT event_type FROM core.event WHERE execution_id = $1 AND event_id = ANY($2) ORDER BY event_id`, [id, accepted.body.event_ids])).rows.map((r) => r.event_type);
    expect(types).toEqual([...Array(5).fill('command.heartbeat'), 'command.started', 'call.done', 'command.completed']);
  });

  it('is recorded once for heartbeats reported one by one (POST /api/events), and again for a new claim', async () => {
    const { id, cmd } = await claimedExecution('w1');
    for (let i = 0; i < 3; i++) {
      const r = await http(t.url, 'POST', '/api/events', { execution_id: id, worker_id: 'w1', ...heartbeat(cmd, i) }, asWorker);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    expect(await claimRecords(id, cmd.command_id)).toEqual(['1:w1']);
    // Claimed again (the first holder went away): the new claim is recorded with its own first report.
    await db.query(`UPDATE core.command SET status = 'PENDING', worker_id = NULL, claimed_at = NULL, heartbeat_at = NULL WHERE command_id = $1`, [cmd.command_id]);
    t.deps.snapshots.commands.set({ ...cmd, status: 'PENDING' });
    const again = await b.claim(cmd.command_id, 'w2');
    expect(again.attempt).toBe(2);
    for (let i = 0; i < 2; i++) {
      const r = await http(t.url, 'POST', '/api/events', { execution_id: id, worker_id: 'w2', ...heartbeat(again, i) }, asWorker);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const r = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'w2', events: commandReport(again).map((e: Json) => ({ execution_id: id, ...e })) }, asWorker);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await claimRecords(id, cmd.command_id)).toEqual(['1:w1', '2:w2']);
  });
});
