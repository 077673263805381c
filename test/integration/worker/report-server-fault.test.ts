// A report the server fails on (500: a fault of its code with one execution, as a step named `#1`
// once threw in the machine) was sent again for ever, and with it every other result in the same
// batch: the pool's reports stopped landing and its drain hung (statechart audit). Now a 500 given
// back REPORT_SERVER_FAULT_TRIES times counts as a refusal: the batch goes again command by
// command, the healthy ones land, and the failing one is failed (report_rejected) or dropped.
import { afterAll, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

/** A drain with nothing left to report takes a moment; one that waits on a report never ends. */
const PROMPT_DRAIN_MS = 10_000;

let fake: HttpTarget | undefined;
let w: WorkerProcess | undefined;
afterAll(async () => {
  await w?.stop(1_000).catch(() => undefined);
  await fake?.close();
});

type Report = { events: { command_id?: number; event_type: string; error?: unknown }[] };
const command = (command_id: number, execution_id: number) => ({ command_id, execution_id, catalog_id: 1, path: 'x', step: 'start', seq: 1, loop_index: null, status: 'CLAIMED', attempt: 1, worker_id: 'w', tasks: [{ name: 'n', kind: 'noop' }], context: {}, keychain: [] });

it("lands the other commands' reports and drains when the server fails on one command's", async () => {
  // A stand-in server that speaks the worker protocol: it hands out two commands at once and
  // fails (500) every report that holds command 7; reports of command 8 alone are taken.
  const reports: Report[] = [];
  const taken: number[][] = [];
  let handedOut = false;
  fake = await startHttpTarget((req, res, recorded) => {
    const answer = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (recorded.path === '/api/worker/claim') {
      if (handedOut) return new Promise<void>((r) => setTimeout(() => r(answer(200, { commands: [] })), 200));
      handedOut = true;
      return answer(200, { commands: [command(7, 3), command(8, 4)] });
    }
    if (recorded.path === '/api/worker/report') {
      const report: Report = JSON.parse(recorded.body);
      reports.push(report);
      const ids = [...new Set(report.events.map((e) => e.command_id))];
      if (ids.includes(7)) return answer(500, { detail: 'internal server error' });
      taken.push(ids.filter((id): id is number => id !== undefined));
      return answer(200, { results: report.events.map((_, i) => ({ event_id: i + 1 })), commands: [] });
    }
    if (recorded.path.startsWith('/api/worker/pool/')) return answer(200, { status: 'ok', name: 'w', cancelled: [] });
  });
  w = await startWorkerProcess(fake.url, { concurrency: 2 });
  // Before: command 8 went with 7 in every report, each failed, without end.
  await until("command 8's report is taken", () => taken.flat().includes(8) || undefined, 20_000);
  await until("command 7's failure is given up", () => w!.output().includes('report_rejected failure of command 7 refused by the server too; dropped') || undefined, 20_000);
  const failures = reports.flatMap((r) => r.events).filter((e) => e.command_id === 7 && e.event_type === 'command.failed');
  expect(failures[0]?.error).toMatchObject({ code: 'report_rejected', message: expect.stringContaining('HTTP 500') });
  const started = Date.now();
  expect(await w.stop(PROMPT_DRAIN_MS)).toBe(0);
  expect(Date.now() - started).toBeLessThan(PROMPT_DRAIN_MS);
  w = undefined;
}, 60_000);
