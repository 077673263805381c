import { expect, it } from 'vitest';
import { asWorker } from '../../helpers/auth.ts';
import { commandReport } from '../../helpers/batch.ts';
import { batchTestBed } from '../../helpers/batch-test-bed.ts';
import { http, type Json } from '../../helpers/http.ts';

// Routing marks a report it keeps only for the record with `late: true` (its command was over)
// or `refused: '<code>'` in its context, and folding skips such events. A worker's own context
// holding those keys was stored as it came: a batch completing a live command with
// `context: {late: true}` moved the command to COMPLETED while the step never ended (batch
// "3 events routed; 0 commands issued", the execution running with nothing left to run, for
// ever). The marks are the server's: a taken report's own are dropped, and it folds.

const bed = batchTestBed('batch/forged-mark', 2);

const marked = (cmd: Json, mark: Json) => commandReport(cmd).map((e) => ({ ...e, context: { ...(e.context ?? {}), ...mark } }));

it('routes a batch whose items carry late or refused in their context as any other, storing them without', async () => {
  for (const mark of [{ late: true }, { refused: 'stale_claim' }]) {
    const a = await bed.claimed('w1');
    const r = await bed.b.post({ execution_id: a.id, worker_id: 'w1', events: marked(a.cmd, mark) });
    expect(r.status).toBe(202);
    const s = await bed.b.settled(r.body.request_id);
    expect(s, JSON.stringify(mark)).toMatchObject({ state: 'completed', message: '3 events routed; 1 commands issued', commands_generated: 1 });
    const stored = await bed.db.query(`SELECT context FROM core.event WHERE execution_id = $1 AND event_id = ANY($2::bigint[]) ORDER BY event_id`, [a.id, r.body.event_ids]);
    for (const row of stored.rows) expect(Object.keys(row.context)).not.toContain(Object.keys(mark)[0]);
    const next = await bed.db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [a.id]);
    expect(next.rows).toHaveLength(1);
    const c = await bed.b.claim(Number(next.rows[0].command_id), 'w1');
    const done = await bed.b.post({ execution_id: a.id, worker_id: 'w1', events: marked(c, mark) });
    await bed.b.settled(done.body.request_id);
    expect((await bed.ex.wait(a.id)).status).toBe('completed');
  }
});

it('folds a report through POST /api/worker/report whose context carries late: true', async () => {
  const a = await bed.claimed('w1');
  const r = await http(bed.t.url, 'POST', '/api/worker/report', { worker_id: 'w1', events: marked(a.cmd, { late: true }).map((e) => ({ ...e, execution_id: a.id, worker_id: 'w1' })) }, asWorker);
  expect(r.status).toBe(200);
  expect(r.body.commands_generated).toBe(1);
  const steps = await bed.db.query(`SELECT step, status FROM core.command WHERE execution_id = $1 ORDER BY seq`, [a.id]);
  expect(steps.rows).toEqual([{ step: 's1', status: 'COMPLETED' }, { step: 's2', status: 'PENDING' }]);
});
