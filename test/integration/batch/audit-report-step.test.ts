import { expect, it } from 'vitest';
import { commandReport } from '../../helpers/batch.ts';
import { batchTestBed } from '../../helpers/batch-test-bed.ts';
import { http, type Json } from '../../helpers/http.ts';

// A report about a command names its step too (a batch item's `step`). The server issued the
// command for one step, and the report was recorded under the step it named: a batch whose items
// said `s9` for s1's command moved the execution on (s1 done, s2 issued), while the log held
// command.started/completed of a step `s9` and GET …/steps/s1 showed s1's run claimed, never
// started or finished, with no tasks. A report about a command is recorded under its command's step.

const bed = batchTestBed('batch/report-step', 2);


it("records a report about a command under the command's step, whatever step it names", async () => {
  const { id, cmd } = await bed.claimed();
  const r = await bed.b.post({ execution_id: id, worker_id: 'w1', events: commandReport({ ...cmd, step: 's9' }) });
  expect(r.status).toBe(202);
  expect((await bed.b.settled(r.body.request_id)).state).toBe('completed');
  const reported = (await bed.ex.events(id)).filter((e: Json) => e.command_id === cmd.command_id);
  expect(reported.map((e: Json) => e.event_type)).toEqual(expect.arrayContaining(['command.started', 'call.done', 'command.completed']));
  expect([...new Set(reported.map((e: Json) => e.step))]).toEqual(['s1']);
  const run = await http(bed.t.url, 'GET', `/api/executions/${id}/steps/s1`);
  expect(run.status).toBe(200);
  expect(run.body.runs).toHaveLength(1);
  expect(run.body.runs[0]).toMatchObject({ command_id: cmd.command_id, status: 'completed' });
  expect(run.body.runs[0].started_at).not.toBeNull();
  expect(run.body.runs[0].finished_at).not.toBeNull();
  expect(run.body.runs[0].tasks.map((x: Json) => x.task ?? x.name)).toEqual(['t']);
});

it("records a refused or late report about a command under the command's step too", async () => {
  const { id, cmd } = await bed.claimed();
  await bed.b.settled((await bed.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) })).body.request_id);
  // A superseded attempt's report (refused) and the same claim's report again (late), naming another step.
  const r = await bed.b.post({ execution_id: id, worker_id: 'w1', events: [...commandReport({ ...cmd, step: 's9', attempt: cmd.attempt - 1 }), ...commandReport({ ...cmd, step: 's9' })] });
  expect((await bed.b.settled(r.body.request_id)).state).toBe('completed');
  const at = new Set(r.body.event_ids as number[]);
  const items = (await bed.ex.events(id)).filter((e: Json) => at.has(e.event_id));
  expect(items.map((e: Json) => e.event_type)).toEqual(['command.refused', 'command.refused', 'command.refused', 'command.started', 'call.done', 'command.completed']);
  expect([...new Set(items.map((e: Json) => e.step))]).toEqual(['s1']);
});
