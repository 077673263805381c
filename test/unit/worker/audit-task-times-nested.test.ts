// A command's report gives each moment (its start and end, each task's start, each attempt's
// start) as `ago_ms`, and lengths (`duration_ms`, `attempt_ms`) beside them; the server makes the
// moments times (src/api/reported-times.ts) and the Gantt and the trace end a task at its start
// plus its length. Each was rounded to whole milliseconds apart, so a task could end 1 ms after
// its command (a task bar past its command's, a child span past its parent's, `call.done` after
// `command.completed` in `svc logs`), found by the insight audit on a real run. On a clock of
// fractional milliseconds, every reading of the report must nest: the command holds its tasks, a
// task its attempts, and attempts follow one another.
import { afterEach, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { stampReportedTimes } from '../../../src/api/reported-times.ts';
import { runCommand } from '../../../src/worker/run-command.ts';
import type { PresentedCommand } from '../../../src/protocol.ts';

afterEach(() => vi.restoreAllMocks());

type Ev = { event_type: string; context: Record<string, unknown> };
const ms = (e: Ev) => Date.parse(String(e.context.at));

async function report(step: number, sendAt: number) {
  let clock = 1000.3;
  let sent = false;
  // Every reading moves the clock on by `step` ms while the command runs; the report is sent at `sendAt`.
  vi.spyOn(performance, 'now').mockImplementation(() => (sent ? sendAt : (clock += step)));
  const cmd: PresentedCommand = {
    command_id: 1, execution_id: 1, catalog_id: 1, path: 'p', step: 's', seq: 1, loop_index: null, status: 'CLAIMED', attempt: 1, worker_id: 'w', keychain: [], context: {},
    tasks: [
      { name: 'a', kind: 'noop' },
      // Refused at once (nothing listens on port 1): three attempts, no wait between them.
      { name: 'b', kind: 'http', url: 'http://127.0.0.1:1/', retry: { attempts: 3, delay_seconds: 0, backoff: 1 } },
    ],
  };
  const ac = new AbortController();
  const out = await runCommand(cmd, { client: {} as never, workerId: 'w', env: {}, log: createLogger('silent'), signal: ac.signal, resolveKeychain: async () => ({}) });
  sent = true;
  const events = stampReportedTimes(JSON.parse(JSON.stringify(out.events)) as Ev[], 5_000_000) as Ev[];
  return events;
}

it('every task lies within its command and every attempt within its task, in order, on any rounding', async () => {
  const problems: string[] = [];
  for (const step of [0.3, 0.45, 0.7, 1.3]) {
    for (let k = 0; k < 10; k++) {
      const events = await report(step, 2000 + k * 0.1);
      const start = ms(events.find((e) => e.event_type === 'command.started')!);
      const end = ms(events.find((e) => e.event_type === 'command.completed' || e.event_type === 'command.failed')!);
      let before = start;
      for (const e of events.filter((e) => e.event_type === 'call.done' || e.event_type === 'call.error')) {
        const taskStart = ms(e);
        const taskEnd = taskStart + Number(e.context.duration_ms);
        if (taskStart < before || taskEnd > end) problems.push(`step ${step} k ${k}: task ${String(e.context.task)} [${taskStart - start}, ${taskEnd - start}] outside [${before - start}, ${end - start}]`);
        before = taskEnd;
        const attempts = events.filter((a) => a.event_type === 'call.attempt' && a.context.task === e.context.task);
        let last = taskStart;
        for (const a of attempts) {
          const aStart = ms(a);
          const aEnd = aStart + Number(a.context.duration_ms);
          if (aStart < last || aEnd > taskEnd) problems.push(`step ${step} k ${k}: attempt ${String(a.context.attempt)} [${aStart - start}, ${aEnd - start}] outside [${last - start}, ${taskEnd - start}]`);
          last = aEnd;
        }
        if (attempts.length && taskEnd - Number(e.context.attempt_ms) < last) problems.push(`step ${step} k ${k}: last attempt of ${String(e.context.task)} starts before the one before it ended`);
      }
    }
  }
  expect(problems).toEqual([]);
});
