import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { asWorker } from '../../helpers/auth.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';

// Every type a worker reports is about a command (its start, heartbeat, a task's attempt or end,
// its completion or failure). Such a report naming no command_id was stored as it came and
// folded into nothing: a batch of `command.failed` and `command.completed` for step s1 of a
// running execution answered "3 events routed", and the log (svc logs, GET /api/events) showed
// s1 failed and completed while s1's only command stayed claimed. It is refused
// (unknown_command, naming what is missing), recorded as a refusal at the batch item's id.

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({ SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '10' });
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(noopPlaybook('batch/names-command', 2));
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function claimed(): Promise<{ id: number; cmd: Json }> {
  const id = await ex.run('batch/names-command');
  const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING' ORDER BY seq LIMIT 1`, [id]);
  return { id, cmd: await b.claim(Number(pending.rows[0].command_id), 'w1') };
}

it('refuses and records batch items of a worker type that name no command', async () => {
  const { id } = await claimed();
  const events = [
    { event_type: 'command.failed', step: 's1', error: { message: 'boom' } },
    { event_type: 'command.completed', step: 's1', result: { tasks: { t: { status: 'ok', data: 1 } } } },
    { event_type: 'call.done', step: 's1', context: { task: 't', kind: 'noop' } },
  ];
  const r = await b.post({ execution_id: id, worker_id: 'w1', events });
  expect(r.status).toBe(202);
  const s = await b.settled(r.body.request_id);
  expect(s).toMatchObject({ state: 'completed', commands_generated: 0 });
  expect(s.message).toContain('3 refused (unknown_command)');
  const at = new Set(r.body.event_ids as number[]);
  const items = (await ex.events(id)).filter((e: Json) => at.has(e.event_id));
  expect(items.map((e: Json) => [e.event_type, e.context?.reported, e.context?.refused])).toEqual([
    ['command.refused', 'command.failed', 'unknown_command'],
    ['command.refused', 'command.completed', 'unknown_command'],
    ['command.refused', 'call.done', 'unknown_command'],
  ]);
  expect(items[0].context.detail).toContain('command_id');
  expect((await ex.events(id)).filter((e: Json) => e.event_type === 'command.completed' || e.event_type === 'command.failed')).toEqual([]);
});

it('refuses such a report by POST /api/events too, storing nothing', async () => {
  const { id } = await claimed();
  const before = (await ex.events(id)).length;
  const r = await http(t.url, 'POST', '/api/events', { execution_id: id, worker_id: 'w1', event_type: 'command.failed', step: 's1', error: { message: 'boom' } }, asWorker);
  expect(r.status).toBe(400);
  expect(r.body.detail).toMatchObject({ code: 'unknown_command' });
  expect(JSON.stringify(r.body.detail)).toContain('command_id');
  expect((await ex.events(id)).length).toBe(before);
});
