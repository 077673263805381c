// A trace drew the events its server wrote (an execution's start, a command's issue) at that
// server's own clock and a worker's moments at its receive time: on a server 60 s ahead of the
// database every span stood 60 s off the times the API answers (started_at, a step's runs). Both
// are now on the database's clock, so a command's span runs from its issue to its reported end.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { runOneNap, startSkewedServer } from '../../helpers/skewed-server.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

let ps: ServerProcesses;
let receiver: OtlpReceiver;
const stops: (() => void)[] = [];
let worker: WorkerProcess | undefined;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  ps = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  for (const stop of stops) stop();
  await ps?.close();
  await receiver?.close();
});

it("an execution's spans on a server 60 s ahead of the database stand at the times its API answers", async () => {
  const { base, kill } = await startSkewedServer(ps, 60_000, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' });
  stops.push(kill);
  worker = await startWorkerProcess(base);
  const { id, execution } = await runOneNap(base, 'audit/skewed-trace');
  const ofIt = (name: string) => receiver.spans.find((s) => s.name === name && s.attributes['svc.execution.id'] === id);
  const root = await until("the execution's span", () => ofIt('playbook audit/skewed-trace'), 15_000);
  const command = await until("the command's span", () => ofIt('command work'), 15_000);
  const said = JSON.stringify({ execution: { started_at: execution.started_at, finished_at: execution.finished_at }, root: [root.startMs, root.endMs], command: [command.startMs, command.endMs] });
  expect(Math.abs(root.startMs - Date.parse(execution.started_at)), said).toBeLessThan(2000);
  expect(Math.abs(root.endMs - Date.parse(execution.finished_at)), said).toBeLessThan(2000);
  // From its issue (the server's) to its end (the worker's report): the task's 300 ms, not 60 s more or less.
  expect(command.endMs - command.startMs, said).toBeGreaterThanOrEqual(250);
  expect(command.endMs - command.startMs, said).toBeLessThan(5000);
}, 90_000);
