// True times and task output (issue 29 items 1 and 2) on a real server and `svc worker` process:
// a command's start is when it started (not when its report came), claim before start; every
// attempt of a retried task is an event with its error and output; output is masked and capped;
// GET /api/executions/{id}/steps/{step} reads it all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const BEARER = 'bearer-Echoed-S3cret-7d1c';
const OUTPUT_BYTES = 2048;

let s: WorkerStack;
let target: HttpTarget;
beforeAll(async () => {
  // The target fails every call, echoing the Authorization header it got (a secret) in its body.
  target = await startHttpTarget((req, res, recorded) => {
    if (!recorded.path.startsWith('/fail')) return;
    res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ auth: req.headers.authorization ?? null }));
  });
  const cap = { SVC_TASK_OUTPUT_BYTES: String(OUTPUT_BYTES) };
  s = await startWorkerStack({ workers: 1, env: cap, workerEnv: cap });
  expect((await http(s.url, 'POST', '/api/credentials', { name: 'echo_bearer', type: 'bearer', data: { token: BEARER } })).status).toBeLessThan(300);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const steps = async (id: number, step: string): Promise<Json> => {
  const r = await http(s.url, 'GET', `/api/executions/${id}/steps/${step}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};

describe('true times', () => {
  it('a task that sleeps 1 s shows about 1 s between started and completed, claimed before started', async () => {
    await s.register(`
apiVersion: svc/v1
metadata: { name: sleepy, path: times/sleepy }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: "sleep 1" }
`);
    const id = await s.run('times/sleepy');
    expect(await s.wait(id)).toMatchObject({ status: 'completed' });
    const [run] = (await steps(id, 'start')).runs as Json[];
    const claimed = Date.parse(String(run.claimed_at));
    const started = Date.parse(String(run.started_at));
    const finished = Date.parse(String(run.finished_at));
    expect(claimed).toBeLessThanOrEqual(started + 5);
    expect(finished - started).toBeGreaterThanOrEqual(950);
    expect(finished - started).toBeLessThan(1600);
    expect(run).toMatchObject({ status: 'completed', seq: 1, tasks: [{ task: 'nap', kind: 'shell', attempts: [{ attempt: 1, status: 'ok', output: { exit_code: 0 } }] }] });
    // The stored start is the worker's, not the report's: the event was stored about 1 s after it.
    const events = await s.events(id);
    const startedEvent = events.find((e: Json) => e.event_type === 'command.started');
    expect(Date.parse(String(startedEvent.created_at)) - Date.parse(String(startedEvent.context.at))).toBeGreaterThanOrEqual(900);
    expect(startedEvent.context).toMatchObject({ at: expect.any(String), received_at: expect.any(String) });
    expect(startedEvent.context.ago_ms).toBeUndefined();
  });
});

describe('a task still running', () => {
  it('shows its run claimed, by its worker, before its first report', async () => {
    await s.register(`
apiVersion: svc/v1
metadata: { name: long, path: times/long }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: "sleep 4" }
`);
    const id = await s.run('times/long');
    // Within the task's 4 s (the log has its claim only with its report, at the end).
    const live = await until('the run claimed', async () => {
      const [run] = (await steps(id, 'start')).runs as Json[];
      return run?.status === 'claimed' && run;
    }, 3_000);
    expect(live.worker_id).toEqual(expect.any(String));
    expect(await s.wait(id)).toMatchObject({ status: 'completed' });
    const [run] = (await steps(id, 'start')).runs as Json[];
    expect(run).toMatchObject({ status: 'completed', worker_id: live.worker_id });
    expect(Math.abs(Date.parse(String(run.claimed_at)) - Date.parse(String(live.claimed_at)))).toBeLessThan(5);
  });
});

describe('a task its execution ended', () => {
  it('shows its run cancelled when the execution was cancelled while it ran', async () => {
    await s.register(`
apiVersion: svc/v1
metadata: { name: cut, path: times/cut }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: "sleep 3" }
`);
    const id = await s.run('times/cut');
    await until('the run claimed', async () => ((await steps(id, 'start')).runs as Json[])[0]?.status === 'claimed', 2_500);
    expect((await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'enough' })).status).toBe(200);
    expect(await s.wait(id)).toMatchObject({ status: 'cancelled' });
    const [run] = (await steps(id, 'start')).runs as Json[];
    expect(run.status).toBe('cancelled');
  });
});

describe('attempts and output', () => {
  it('each failed attempt is an event with its error and output, masked; the step route lists them', async () => {
    await s.register(`
apiVersion: svc/v1
metadata: { name: flaky, path: times/flaky }
workflow:
  - step: start
    tool:
      name: call
      kind: http
      method: GET
      url: "${target.url}/fail"
      auth: echo_bearer
      retry: { attempts: 3, delay_seconds: 0.05 }
`);
    const id = await s.run('times/flaky');
    expect(await s.wait(id)).toMatchObject({ status: 'failed' });
    const events = await s.events(id);
    const attempts = events.filter((e: Json) => e.event_type === 'call.attempt');
    expect(attempts.map((e: Json) => e.context.attempt)).toEqual([1, 2]);
    expect(attempts[0]).toMatchObject({ error: { code: 'http_status' }, result: { output: { status: 500 } } });
    expect(JSON.stringify(events)).not.toContain(BEARER);
    const [run] = (await steps(id, 'start')).runs as Json[];
    const tries = run.tasks[0].attempts as Json[];
    expect(tries.map((a) => [a.attempt, a.status])).toEqual([[1, 'error'], [2, 'error'], [3, 'error']]);
    for (const a of tries) {
      expect(a.output).toMatchObject({ status: 500 });
      expect(typeof a.duration_ms).toBe('number');
    }
    // Attempts in order of time, each after the one before.
    const starts = tries.map((a) => Date.parse(String(a.started_at)));
    expect(starts[1]).toBeGreaterThan(starts[0]);
    expect(starts[2]).toBeGreaterThan(starts[1]);
    expect(JSON.stringify(run)).not.toContain(BEARER);
  });

  it('output is capped at SVC_TASK_OUTPUT_BYTES', async () => {
    await s.register(`
apiVersion: svc/v1
metadata: { name: chatty, path: times/chatty }
workflow:
  - step: start
    tool: { name: talk, kind: shell, command: "head -c 20000 /dev/zero | tr '\\\\0' x; exit 3", retry: { attempts: 2 } }
`);
    const id = await s.run('times/chatty');
    expect(await s.wait(id)).toMatchObject({ status: 'failed' });
    const attempt = (await s.events(id)).find((e: Json) => e.event_type === 'call.attempt');
    expect(attempt.result.output).toMatchObject({ truncated: true, bytes: expect.any(Number) });
    expect(String(attempt.result.output.preview).length).toBe(OUTPUT_BYTES);
    const [run] = (await steps(id, 'start')).runs as Json[];
    expect(run.tasks[0].attempts).toHaveLength(2);
    expect(run.tasks[0].attempts[1].output).toMatchObject({ truncated: true });
    expect((await http(s.url, 'GET', `/api/executions/${id}/steps/nope`)).status).toBe(404);
  });
});

describe('child runs', () => {
  it("a playbook task's run ends with its child (whose end is stored without the step)", async () => {
    await s.register(`
apiVersion: svc/v1
metadata: { name: failing_child, path: times/failing_child }
workflow:
  - step: start
    tool: { name: fail, kind: shell, command: "exit 4" }
`);
    await s.register(`
apiVersion: svc/v1
metadata: { name: parent, path: times/parent }
workflow:
  - step: kid
    tool: { name: sub, kind: playbook, path: times/failing_child }
`);
    const id = await s.run('times/parent');
    expect(await s.wait(id)).toMatchObject({ status: 'failed' });
    const finished = (await s.events(id)).find((e: Json) => e.event_type === 'child.finished');
    expect(finished).toMatchObject({ context: { status: 'failed' } });
    const [run] = (await steps(id, 'kid')).runs as Json[];
    expect(run).toMatchObject({ status: 'failed', child_execution_id: finished.context.child_execution_id });
    expect(Date.parse(String(run.finished_at))).toBeGreaterThanOrEqual(Date.parse(String(run.started_at)));
  });
});

describe('child runs of a loop', () => {
  it('each names its loop item, as a command run does', async () => {
    await s.register(`
apiVersion: svc/v1
metadata: { name: ok_child, path: times/ok_child }
workflow:
  - step: start
`);
    await s.register(`
apiVersion: svc/v1
metadata: { name: loop_parent, path: times/loop_parent }
workflow:
  - step: kids
    loop: { in: [10, 20, 30], iterator: n, mode: parallel }
    tool: { name: sub, kind: playbook, path: times/ok_child }
`);
    const id = await s.run('times/loop_parent');
    expect(await s.wait(id)).toMatchObject({ status: 'completed' });
    const runs = (await steps(id, 'kids')).runs as Json[];
    expect(runs.map((r) => [r.loop_index, r.status])).toEqual([
      [0, 'completed'],
      [1, 'completed'],
      [2, 'completed'],
    ]);
    expect(new Set(runs.map((r) => r.child_execution_id)).size).toBe(3);
  });
});
