import { expect, it } from 'vitest';
import { asWorker } from '../../helpers/auth.ts';
import { batchTestBed } from '../../helpers/batch-test-bed.ts';
import { http, type Json } from '../../helpers/http.ts';

// Every type a worker reports is about a command (its start, heartbeat, a task's attempt or end,
// its completion or failure). Such a report naming no command_id was stored as it came and
// folded into nothing: a batch of `command.failed` and `command.completed` for step s1 of a
// running execution answered "3 events routed", and the log (svc logs, GET /api/events) showed
// s1 failed and completed while s1's only command stayed claimed. It is refused
// (unknown_command, naming what is missing), recorded as a refusal at the batch item's id.

const bed = batchTestBed('batch/names-command', 2);


it('refuses and records batch items of a worker type that name no command', async () => {
  const { id } = await bed.claimed();
  const events = [
    { event_type: 'command.failed', step: 's1', error: { message: 'boom' } },
    { event_type: 'command.completed', step: 's1', result: { tasks: { t: { status: 'ok', data: 1 } } } },
    { event_type: 'call.done', step: 's1', context: { task: 't', kind: 'noop' } },
  ];
  const r = await bed.b.post({ execution_id: id, worker_id: 'w1', events });
  expect(r.status).toBe(202);
  const s = await bed.b.settled(r.body.request_id);
  expect(s).toMatchObject({ state: 'completed', commands_generated: 0 });
  expect(s.message).toContain('3 refused (unknown_command)');
  const at = new Set(r.body.event_ids as number[]);
  const items = (await bed.ex.events(id)).filter((e: Json) => at.has(e.event_id));
  expect(items.map((e: Json) => [e.event_type, e.context?.reported, e.context?.refused])).toEqual([
    ['command.refused', 'command.failed', 'unknown_command'],
    ['command.refused', 'command.completed', 'unknown_command'],
    ['command.refused', 'call.done', 'unknown_command'],
  ]);
  expect(items[0].context.detail).toContain('command_id');
  expect((await bed.ex.events(id)).filter((e: Json) => e.event_type === 'command.completed' || e.event_type === 'command.failed')).toEqual([]);
});

it('refuses such a report by POST /api/events too, storing nothing', async () => {
  const { id } = await bed.claimed();
  const before = (await bed.ex.events(id)).length;
  const r = await http(bed.t.url, 'POST', '/api/events', { execution_id: id, worker_id: 'w1', event_type: 'command.failed', step: 's1', error: { message: 'boom' } }, asWorker);
  expect(r.status).toBe(400);
  expect(r.body.detail).toMatchObject({ code: 'unknown_command' });
  expect(JSON.stringify(r.body.detail)).toContain('command_id');
  expect((await bed.ex.events(id)).length).toBe(before);
});
