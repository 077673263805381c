import { expect, it } from 'vitest';
import { commandReport } from '../../helpers/batch.ts';
import { batchTestBed } from '../../helpers/batch-test-bed.ts';
import { type Json } from '../../helpers/http.ts';

// A batch names one execution (its body's execution_id) and its items hold the fields of a worker
// report. A field the batch does not have was dropped: items naming an execution of their own (a
// batch "mixing executions") were stored in the body's execution's log, and a misspelt `atempt`
// or `worker` was answered 202, the report then refused (not_holder) while processing, where
// the client no longer looks. Such a field is refused, naming it, and nothing is stored.

const bed = batchTestBed('batch/fields', 1);

const stored = async (id: number) =>
  Number((await bed.db.query(`SELECT count(*) AS n FROM core.event WHERE execution_id = $1 AND event_type = 'batch.accepted'`, [id])).rows[0].n) +
  Number((await bed.db.query(`SELECT count(*) AS n FROM core.batch_request WHERE execution_id = $1`, [id])).rows[0].n);

it('refuses items that name an execution of their own (one batch, one execution), storing nothing', async () => {
  const a = await bed.claimed('w1');
  const c = await bed.claimed('w1');
  const events = [...commandReport(a.cmd), ...commandReport(c.cmd).map((e) => ({ ...e, execution_id: c.id }))];
  const r = await bed.b.post({ execution_id: a.id, worker_id: 'w1', events });
  expect(r.status).toBe(422);
  expect(r.body.detail.errors).toEqual(expect.arrayContaining([`events[3].execution_id: must be the batch's execution_id (${a.id}), got ${c.id}: a batch reports for one execution`]));
  const w = await bed.b.post({ execution_id: a.id, worker_id: 'w1', events: commandReport(a.cmd).map((e, i) => (i === 1 ? { ...e, worker_id: 'w2' } : e)) });
  expect(w.status).toBe(422);
  expect(w.body.detail.errors).toEqual(['events[1].worker_id: must be the batch\'s worker_id (w1), got "w2"']);
  expect(await stored(a.id)).toBe(0);
  expect(await stored(c.id)).toBe(0);
});

it('takes items shaped as POST /api/events bodies, repeating the batch\'s execution_id and worker_id', async () => {
  const a = await bed.claimed('w1');
  const events = commandReport(a.cmd).map((e) => ({ ...e, execution_id: a.id, worker_id: 'w1' }));
  const ok = await bed.b.post({ execution_id: a.id, worker_id: 'w1', events });
  expect(ok.status).toBe(202);
  expect((await bed.b.settled(ok.body.request_id)).state).toBe('completed');
  expect((await bed.ex.wait(a.id)).status).toBe('completed');
});

it('refuses a misspelt field of an item or of the batch, naming it, storing nothing', async () => {
  const a = await bed.claimed('w1');
  const [started, done, completed] = commandReport(a.cmd);
  const { attempt, ...rest } = completed;
  const item = await bed.b.post({ execution_id: a.id, worker_id: 'w1', events: [started, done, { ...rest, atempt: attempt }] });
  expect(item.status).toBe(422);
  expect(item.body.detail.errors).toEqual(["events[2].atempt: unknown field (did you mean 'attempt'?)"]);
  const batch = await bed.b.post({ execution_id: a.id, worker: 'w1', events: [started, done, completed] });
  expect(batch.status).toBe(422);
  expect(batch.body.detail.errors).toEqual(['worker: unknown field (known: execution_id, worker_id, events)']);
  expect(await stored(a.id)).toBe(0);
  // Sent as meant, it is accepted and completes the execution.
  const ok = await bed.b.post({ execution_id: a.id, worker_id: 'w1', events: commandReport(a.cmd) });
  expect(ok.status).toBe(202);
  expect((await bed.b.settled(ok.body.request_id)).state).toBe('completed');
  expect((await bed.ex.wait(a.id)).status).toBe('completed');
});

it('documents the batch and its items as taking no other fields', async () => {
  const doc = (await (await fetch(`${bed.t.url}/docs/json`)).json()) as Json;
  const body = doc.paths['/api/events/batch'].post.requestBody.content['application/json'].schema;
  expect(body.additionalProperties).toBe(false);
  expect(body.properties.events.items.additionalProperties).toBe(false);
});
