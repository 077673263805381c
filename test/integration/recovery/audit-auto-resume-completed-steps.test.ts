// What docs/operations.md (Auto-resume at restart) says of `restart`'s successor, with real
// processes: a server and its worker killed while the second step runs; the successor replays the
// step the old one had completed (its command issued once, a step.replayed) and runs the second, and
// `svc retry` of an execution auto-resume cancelled (`cancel` mode) starts from the step the stop
// cut short, the completed one replayed (its command issued once).
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { freePort } from '../../helpers/ports.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { waitForOutput, type SvcProcess } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';
import type { WorkerProcess } from '../../helpers/worker-process.ts';

const WORKER_STALE_SECONDS = 8;
const SERVER_ENV = {
  SVC_COMMAND_REAPER_ENABLED: 'false',
  SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(WORKER_STALE_SECONDS),
  SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1',
  SVC_LOG_LEVEL: 'info',
};

let processes: ServerProcesses;
let db: pg.Client;
let dir: string;
let port: number;
let base: string;

beforeAll(async () => {
  processes = await ServerProcesses.open(SERVER_ENV);
  ({ db, dir } = processes);
  port = await freePort();
  base = `http://127.0.0.1:${port}`;
});
afterEach(async () => processes.stopAll());
afterAll(async () => processes?.close());

/** First step: a task that completes. Second: held while HOLD exists. */
const playbook = (path: string, hold: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: two, path: ${path} }
workflow:
  - step: first
    tool: { name: count, kind: shell, command: 'echo counted' }
    next: second
  - step: second
    tool: { name: wait, kind: shell, env: { HOLD: "${hold}", STOP: "${processes.stopFile}" }, command: 'while [ -e "$HOLD" ] && [ ! -e "$STOP" ]; do sleep 0.1; done; echo done' }
`;

const claimedStep = async (executionId: number) =>
  (await db.query(`SELECT step FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED', 'RUNNING')`, [executionId])).rows[0]?.step as string | undefined;
/** Commands issued for the first step, across the executions given (each a run of its task). */
const runs = async (ids: number[]) => (await db.query(`SELECT count(*)::int AS n FROM core.command WHERE execution_id = ANY($1) AND step = 'first'`, [ids])).rows[0].n as number;

/** Runs the playbook until its second step is claimed, kills server and worker, starts the server in `mode` and a new worker. */
async function interrupt(name: string, mode: 'restart' | 'cancel'): Promise<{ id: number; server: SvcProcess }> {
  const hold = join(dir, `${name}-hold`);
  await writeFile(hold, '');
  const s1 = (await processes.server({ SVC_AUTO_RESUME_MODE: mode }, port)).proc;
  const api = executionApi(base);
  await api.register(playbook(`resume/${name}`, hold));
  const doomed: WorkerProcess = await processes.worker(base, 1);
  const id = await api.run(`resume/${name}`);
  await until('the second step to be claimed', async () => ((await claimedStep(id)) === 'second' ? true : undefined), 30_000);
  expect(await runs([id])).toBe(1);
  s1.kill('SIGKILL');
  await s1.exited;
  await doomed.kill();
  await new Promise((r) => setTimeout(r, 1_500));
  const server = (await processes.server({ SVC_AUTO_RESUME_MODE: mode }, port)).proc;
  await unlink(hold);
  await processes.worker(base, 1);
  await waitForOutput(server, 'auto-resume handled', 60_000);
  return { id, server };
}

describe('auto-resume and the steps an interrupted execution had completed', () => {
  it('restart: the successor replays the completed first step and runs from the second', async () => {
    const { id } = await interrupt('restart', 'restart');
    const successor = Number((await db.query(`SELECT execution_id FROM core.event WHERE event_id = 1 AND context->>'resumed_from' = $1`, [String(id)])).rows[0].execution_id);
    expect(await executionApi(base).wait(successor, 60_000)).toMatchObject({ status: 'completed' });
    expect(await runs([id, successor])).toBe(1);
    const replayed = await db.query(`SELECT step FROM core.event WHERE execution_id = $1 AND event_type = 'step.replayed'`, [successor]);
    expect(replayed.rows.map((r) => r.step)).toEqual(['first']);
    const second = await db.query(`SELECT count(*)::int AS n FROM core.command WHERE execution_id = $1 AND step = 'second'`, [successor]);
    expect(second.rows[0].n).toBe(1);
  });

  it('cancel, then svc retry: from the step the stop cut short, the completed one replayed', async () => {
    const { id } = await interrupt('cancel', 'cancel');
    expect((await http(base, 'GET', `/api/executions/${id}`)).body.status).toBe('cancelled');
    const retried = await http(base, 'POST', `/api/executions/${id}/retry`, {});
    expect(retried.body).toMatchObject({ from_step: 'second', replayed: ['first'] });
    expect(await executionApi(base).wait(retried.body.execution_id, 60_000)).toMatchObject({ status: 'completed' });
    expect(await runs([id, retried.body.execution_id])).toBe(1);
  });
});
