// A worker's moments (context.at: a command's start and end, a task's attempts) were the server's
// receive time by its own clock, while an issue, a claim and the execution's end are PostgreSQL's:
// on a server 60 s ahead a command started 60 s after its claim and ended 60 s after its execution.
// They are now counted on the database's clock as the server last read it, as waits are.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { runOneNap, startSkewedServer } from '../../helpers/skewed-server.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

let ps: ServerProcesses;
const stops: (() => void)[] = [];
let worker: WorkerProcess | undefined;
beforeAll(async () => {
  ps = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  for (const stop of stops) stop();
  await ps?.close();
});

const ms = (t: unknown): number => Date.parse(String(t));

it("a step run's times on a server 60 s ahead of the database follow each other as they happened", async () => {
  const { base, kill } = await startSkewedServer(ps, 60_000);
  stops.push(kill);
  worker = await startWorkerProcess(base);
  const { id, execution } = await runOneNap(base, 'audit/skewed-times');
  const [run] = (await http(base, 'GET', `/api/executions/${id}/steps/work`)).body.runs as Json[];
  const [attempt] = run.tasks[0].attempts as Json[];
  const times = { issued: ms(run.issued_at), claimed: ms(run.claimed_at), started: ms(run.started_at), attempt: ms(attempt.started_at), finished: ms(run.finished_at), ended: ms(execution.finished_at) };
  const said = JSON.stringify({ run, execution_finished_at: execution.finished_at });
  // Whole milliseconds rounded apart (docs/operations.md): a moment may stand 2 ms off its order.
  expect(times.claimed - times.issued, said).toBeGreaterThanOrEqual(-2);
  expect(times.started - times.claimed, said).toBeGreaterThanOrEqual(-2);
  expect(times.started - times.claimed, said).toBeLessThan(2000);
  expect(times.attempt - times.started, said).toBeGreaterThanOrEqual(-2);
  expect(times.finished - times.started, said).toBeGreaterThanOrEqual(250);
  expect(times.ended - times.finished, said).toBeGreaterThanOrEqual(-2);
  expect(times.ended - times.finished, said).toBeLessThan(2000);
  // svc logs counts each line from the first: the command's end within the execution's own run time.
  const events = (await http(base, 'GET', `/api/events/${id}?limit=100`)).body.events as Json[];
  const completed = events.find((e) => e.event_type === 'command.completed');
  expect(ms(completed.context.at) - ms(events[0].created_at), JSON.stringify(completed)).toBeLessThan(ms(execution.finished_at) - ms(execution.started_at) + 2);
}, 90_000);
