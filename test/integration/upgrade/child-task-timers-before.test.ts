// Logs written before playbook tasks had their own timers (d064124: timeout_seconds and retry were
// stored with a warning and had no effect), read by today's engine after an in-place upgrade. Such
// a log numbers a later command's seq with no timer before it, and a failed child failed its step.
// Folded as if the timers had been there, a running execution's next report named a seq the fold
// had given to a timer: it waited for ever (auto-resume then cancelled and restarted it, running
// its steps again); a failed one showed its step waiting for a retry and refused a retry without
// from_step. The rows are as 8a96199 wrote them (execution.started without childTaskTimers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

let s: TestApp;
let worker: WorkerProcess | undefined;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await worker?.stop();
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);

async function register(content: string): Promise<number> {
  const r = await post('/api/catalog/playbook', { content });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return (await s.deps.db.query<{ catalog_id: number }>('SELECT catalog_id FROM core.catalog WHERE path = $1 ORDER BY version DESC LIMIT 1', [r.body.path])).rows[0].catalog_id;
}

type OldEvent = { type: string; status?: string; step?: string; command?: boolean; context?: unknown; result?: unknown; error?: unknown };

/**
 * An execution id handed out by the server (its event range exists), its rows then replaced by
 * those the old version wrote: `events`, of which the first `applied` were applied.
 */
async function oldExecution(catalogId: number, path: string, status: string, events: (id: number, commandId: number | null) => OldEvent[], applied: number, command?: { seq: number; step: string }): Promise<{ id: number; commandId: number | null }> {
  const started = await post('/api/run/playbook', { path: 'upgrade/hold' });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const id = started.body.execution_id as number;
  const db = s.deps.db;
  await db.query('DELETE FROM core.wait WHERE execution_id = $1', [id]);
  await db.query('DELETE FROM core.event WHERE execution_id = $1', [id]);
  let commandId: number | null = null;
  if (command) {
    // Reported already: its completion waits in the inbox below.
    const { rows } = await db.query<{ command_id: number }>(
      `INSERT INTO core.command (execution_id, catalog_id, seq, step, status, attempt, worker_id, input) VALUES ($1, $2, $3, $4, 'COMPLETED', 1, 'old-worker', '{}') RETURNING command_id`,
      [id, catalogId, command.seq, command.step],
    );
    commandId = Number(rows[0].command_id);
  }
  const rows = events(id, commandId);
  for (const [i, e] of rows.entries()) {
    await db.query(
      `INSERT INTO core.event (execution_id, event_id, catalog_id, event_type, status, step, command_id, worker_id, context, result, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [id, i + 1, catalogId, e.type, e.status ?? 'running', e.step ?? null, e.command ? commandId : null, e.command ? 'old-worker' : null, e.context ?? null, e.result ?? null, e.error ?? null],
    );
  }
  const failed = status === 'failed';
  await db.query(
    `UPDATE core.execution SET catalog_id = $2, path = $3, status = $4, snapshot = NULL, snapshot_event_id = 0, applied_event_id = $5, last_event_id = $6,
            error = $7, finished_at = CASE WHEN $8 THEN now() END WHERE execution_id = $1`,
    [id, catalogId, path, status, applied, rows.length, failed ? rows.at(-1)?.error : null, failed],
  );
  return { id, commandId };
}

const started = (id: number, path: string, catalogId: number): OldEvent => ({
  type: 'execution.started',
  context: { input: { args: {}, path, workload: {}, catalogId, parentSeq: null, executionId: id, rootExecutionId: id, parentExecutionId: null }, requested_by: { sub: 'local', via: 'local', role: 'admin' } },
});

describe('logs written before playbook tasks had timers, upgraded in place', () => {
  beforeAll(async () => {
    await register(`apiVersion: svc/v1
metadata: { name: hold, path: upgrade/hold }
workflow:
  - step: start
    wait: { signal: never }
`);
  });

  it('a running execution whose task had timeout_seconds takes its command\'s report and goes on, once', async () => {
    await register(`apiVersion: svc/v1
metadata: { name: quickchild, path: upgrade/quickchild }
workflow:
  - step: start
`);
    const catalogId = await register(`apiVersion: svc/v1
metadata: { name: parent3, path: upgrade/parent3 }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: upgrade/quickchild, timeout_seconds: 600 }
    next: s2
  - step: s2
    tool: { name: b, kind: shell, command: 'echo s2' }
    next: s3
  - step: s3
    tool: { name: c, kind: shell, command: 'echo s3' }
`);
    // As 8a96199 wrote it: the child at seq 1 with no timer, s2's command at seq 2; its completion
    // reported by the old worker to the new server (in the inbox, not applied yet).
    const { id } = await oldExecution(catalogId, 'upgrade/parent3', 'running', (id, commandId) => [
      started(id, 'upgrade/parent3', catalogId),
      { type: 'step.enter', step: 'start' },
      { type: 'child.started', step: 'start', context: { seq: 1, path: 'upgrade/quickchild', task: 'kid', child_execution_id: id + 1 } },
      { type: 'child.finished', context: { seq: 1, status: 'completed', child_execution_id: id + 1 } },
      { type: 'step.exit', step: 'start', context: { status: 'ok' }, result: { result: null, status: 'completed', execution_id: id + 1 } },
      { type: 'step.enter', step: 's2' },
      { type: 'command.issued', step: 's2', command: true, context: { seq: 2, command_id: commandId, loop_index: null } },
      { type: 'command.completed', step: 's2', command: true, context: { seq: 2 }, result: { tasks: { b: { data: { stderr: '', stdout: 's2\n', exit_code: 0 }, status: 'ok' } } } },
    ], 7, { seq: 2, step: 's2' });

    // Anything that routes to it folds its inbox: a pause, then the resume.
    expect((await post(`/api/executions/${id}/pause`)).status).toBe(200);
    expect((await post(`/api/executions/${id}/resume`)).status).toBe(200);
    worker = await startWorkerProcess(s.url, { concurrency: 2, env: { SVC_WORKER_TOKEN: s.workerToken } });
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return ['completed', 'failed', 'cancelled'].includes(String(body.status)) && body;
    }, 20_000);
    expect(done).toMatchObject({ status: 'completed' });
    const log = (await get(`/api/events/${id}?limit=1000`)).body.events as { event_type: string; step: string | null; context: { seq?: number } | null }[];
    // s2 ran once (the old worker's run), s3 once, at the seq after it.
    expect(log.filter((e) => e.event_type === 'command.issued').map((e) => [e.step, e.context?.seq])).toEqual([['s2', 2], ['s3', 3]]);
    expect(log.filter((e) => e.event_type === 'command.completed')).toHaveLength(2);
    expect(log.filter((e) => e.event_type === 'timer.set')).toEqual([]);
    const state = (await get(`/api/executions/${id}/state`)).body;
    expect(state.steps).toMatchObject({ start: { status: 'completed' }, s2: { status: 'completed' }, s3: { status: 'completed' } });
  });

  it('a failed execution whose task had retry shows its failed step and is retried from it', async () => {
    await register(`apiVersion: svc/v1
metadata: { name: failchild, path: upgrade/failchild }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: 'exit 1' }
`);
    const catalogId = await register(`apiVersion: svc/v1
metadata: { name: retryparent, path: upgrade/retryparent }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: upgrade/failchild, retry: { attempts: 2, delay_seconds: 200 } }
`);
    const error = { code: 'exit_code', step: 'start', message: 'command exited with code 1' };
    const { id } = await oldExecution(catalogId, 'upgrade/retryparent', 'failed', (id) => [
      started(id, 'upgrade/retryparent', catalogId),
      { type: 'step.enter', step: 'start' },
      { type: 'child.started', step: 'start', context: { seq: 1, path: 'upgrade/failchild', task: 'kid', child_execution_id: id + 1 } },
      { type: 'child.finished', context: { seq: 1, status: 'failed', child_execution_id: id + 1 }, error },
      { type: 'step.exit', status: 'failed', step: 'start', context: { status: 'error' }, error: { code: 'exit_code', message: 'command exited with code 1' } },
      { type: 'workflow.failed', status: 'failed', error },
      { type: 'playbook.failed', status: 'failed', error },
    ], 7);
    const state = (await get(`/api/executions/${id}/state`)).body;
    expect(state).toMatchObject({ status: 'failed', active_steps: [], steps: { start: { status: 'failed' } } });
    const retried = await post(`/api/executions/${id}/retry`, {});
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toMatchObject({ retry_of: id, from_step: 'start' });
  });
});
