// A command cancelled while a worker held it: a worker reports its claim with its first report,
// which for a long task is its end, so at the cancel the log held no claim and the command's span
// had no `svc.worker.id`, `svc.command.attempt` 1 and no `claimed` event, as if no worker ever had
// it (an operator asking whether the cancelled step's side effect happened read that none ran).
// The cancel leaves the claim on the command's row; the trace now reads it from there. Real
// server, real worker process, real OTLP receiver.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../../src/telemetry/start-tracing.ts';
import { http } from '../../helpers/http.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let receiver: OtlpReceiver;
let stack: WorkerStack;
let tracing: Tracing;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20', SVC_TRACE_SALT: 'cancelled-held' };
  stack = await startWorkerStack({ env, concurrency: 1 });
  // As src/service.ts wires it from the same config.
  tracing = startTracing(stack.deps.config, { db: stack.deps.db, log: stack.deps.log })!;
  stack.deps.traces = tracing;
  await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: long, path: traced/cancelled-held }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: 'sleep 30' }
`);
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await tracing?.shutdown();
  await receiver?.close();
});

it("the span of a command cancelled while a worker held it names that worker and its claim", async () => {
  const id = await stack.run('traced/cancelled-held');
  const held = await until('its command held', async () => {
    const row = (await stack.deps.db.query<{ status: string; worker_id: string; attempt: number; claimed_at: Date }>('SELECT status, worker_id, attempt, claimed_at FROM core.command WHERE execution_id = $1', [id])).rows[0];
    return row && ['CLAIMED', 'RUNNING'].includes(row.status) ? row : undefined;
  }, 30_000, 50);
  // Its claim is on the row only: the worker reports it with the task's end.
  expect((await stack.events(id)).map((e) => e.event_type)).not.toContain('command.claimed');
  expect((await http(stack.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'wrong input' })).status).toBe(200);
  await until('the execution span', async () => {
    await tracing.flush();
    return receiver.spans.some((s) => s.name === 'playbook traced/cancelled-held');
  }, 20_000);
  const command = receiver.spans.filter((s) => s.name === 'command start' && s.attributes['svc.execution.id'] === id);
  expect(command).toHaveLength(1);
  expect(command[0].attributes).toMatchObject({ 'svc.command.status': 'cancelled', 'svc.worker.id': stack.workers[0].name, 'svc.command.attempt': held.attempt });
  expect(command[0].events.map((e) => e.name)).toEqual(['claimed']);
}, 90_000);
