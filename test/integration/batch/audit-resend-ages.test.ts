import { expect, it } from 'vitest';
import { commandReport } from '../../helpers/batch.ts';
import { batchTestBed } from '../../helpers/batch-test-bed.ts';
import { type Json } from '../../helpers/http.ts';

// A worker's events carry `context.ago_ms`, how long before the send each moment was, written
// afresh at each send (src/worker/elapsed.ts). A batch sent again with its Idempotency-Key after
// a 503 or a lost answer (what docs/operations.md tells clients to do) therefore differs in those
// ages alone: it was refused 422 idempotency_key_reused, and a client that then took a new key
// had the batch stored and routed twice. The ages are when it was sent, not what it reports.

const bed = batchTestBed('batch/ages', 1);

/** The command's report as a worker sends it `sentLaterMs` after the first send: each age that much larger. */
function report(cmd: Json, sentLaterMs: number): Json[] {
  return commandReport(cmd).map((e, i) => ({ ...e, context: { ...(e.context ?? {}), ago_ms: 300 - i * 100 + sentLaterMs } }));
}

it('answers a batch sent again with its key and fresh ages with the first 202, storing it once', async () => {
  const id = await bed.ex.run('batch/ages');
  const pending = await bed.db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
  const cmd = await bed.b.claim(Number(pending.rows[0].command_id), 'w1');
  const key = { 'idempotency-key': `ages-${id}` };
  const first = await bed.b.post({ execution_id: id, worker_id: 'w1', events: report(cmd, 0) }, key);
  expect(first.status).toBe(202);
  const again = await bed.b.post({ execution_id: id, worker_id: 'w1', events: report(cmd, 2_500) }, key);
  expect(again.status, JSON.stringify(again.body)).toBe(202);
  expect(again.body).toEqual({ ...first.body, duplicate: true });
  // What the report says still counts: another result under the key is another body.
  const other = await bed.b.post({ execution_id: id, worker_id: 'w1', events: report(cmd, 0).map((e) => (e.event_type === 'command.completed' ? { ...e, result: { tasks: { t: { status: 'ok', data: 'other' } } } } : e)) }, key);
  expect(other.status).toBe(422);
  expect(other.body.detail.code).toBe('idempotency_key_reused');
  expect((await bed.b.settled(first.body.request_id)).state).toBe('completed');
  const stored = await bed.db.query(`SELECT count(*) AS n FROM core.batch_request WHERE execution_id = $1`, [id]);
  expect(Number(stored.rows[0].n)).toBe(1);
  const events = await bed.ex.events(id);
  expect(events.filter((e: Json) => e.event_type === 'command.completed')).toHaveLength(1);
  expect((await bed.ex.wait(id)).status).toBe('completed');
});
