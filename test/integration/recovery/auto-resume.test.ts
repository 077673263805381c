// Restart auto-resume with real processes: a server and a worker killed together leave an
// execution interrupted; the next server start cancels it (and, in `restart` mode, starts it
// again), while an execution a live worker is still running is left alone.
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { freePort } from '../../helpers/ports.ts';
import { asWorker } from '../../helpers/auth.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { waitForOutput, type SvcProcess } from '../../helpers/process.ts';
import { heldPlaybook, ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';
import type { WorkerProcess } from '../../helpers/worker-process.ts';

// The reaper is off: what recovers the execution here is auto-resume alone. A live pool beats
// every 2 s while busy; the stale threshold leaves it room for that on a loaded 2-core CI machine
// (at 4 s a busy survivor's first beat after the restart once came too late, and auto-resume
// rightly took it for dead).
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

/** The server, always on the same port (its workers find it again after a restart). */
const startServer = async (mode: 'restart' | 'cancel'): Promise<SvcProcess> => (await processes.server({ SVC_AUTO_RESUME_MODE: mode }, port)).proc;
const startWorker = (): Promise<WorkerProcess> => processes.worker(base, 1);
const registerHeld = (path: string, hold: string) => executionApi(base).register(heldPlaybook(path, hold, processes.stopFile));

const claimedBy = async (executionId: number) =>
  (await db.query(`SELECT worker_id FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED', 'RUNNING')`, [executionId])).rows[0]?.worker_id as string | undefined;

/**
 * Kills the server (SIGKILL) mid-run and starts it again in `mode` after `downMs` (longer than
 * SVC_AUTO_RESUME_MIN_STALE_SECONDS: the interrupted execution makes no progress meanwhile);
 * `killed` workers die with it, the others live on.
 */
async function crashAndRestart(server: SvcProcess, killed: WorkerProcess[], mode: 'restart' | 'cancel', downMs = 1_500): Promise<SvcProcess> {
  server.kill('SIGKILL');
  await server.exited;
  for (const w of killed) await w.kill();
  await new Promise((r) => setTimeout(r, downMs));
  return startServer(mode);
}

describe('restart auto-resume', () => {
  it('restart mode: the interrupted execution is cancelled and started again (resumed_from); a busy one is left alone', async () => {
    const s1 = await startServer('restart');
    const api = executionApi(base);
    const hold = join(dir, 'hold-1');
    const busyHold = join(dir, 'hold-busy');
    await writeFile(hold, '');
    await writeFile(busyHold, '');
    await registerHeld('resume/held', hold);
    await registerHeld('resume/busy', busyHold);
    const doomed = await startWorker();
    const interrupted = await api.run('resume/held', { n: 7 });
    await until('the doomed worker to claim it', async () => ((await claimedBy(interrupted)) === doomed.name ? true : undefined));
    const survivor = await startWorker();
    const busy = await api.run('resume/busy', { n: 8 });
    await until('the surviving worker to claim the busy one', async () => ((await claimedBy(busy)) === survivor.name ? true : undefined));

    // Down longer than SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: the surviving worker's last beat
    // is stale when the server comes back, and another pool beats at once. Auto-resume must wait
    // until the survivor is heard from again, not act on the first beat it sees.
    const s2 = await crashAndRestart(s1, [doomed], 'restart', WORKER_STALE_SECONDS * 1000 + 500);
    expect((await http(base, 'POST', '/api/worker/pool/register', { name: 'early-bird', capacity: 1 }, asWorker)).status).toBe(200);
    await unlink(hold);
    await startWorker();
    await waitForOutput(s2, 'auto-resume handled', 40_000);

    const old = (await http(base, 'GET', `/api/executions/${interrupted}`)).body;
    expect(old.status).toBe('cancelled');
    const oldEvents: Json[] = await api.events(interrupted);
    const cancel = oldEvents.find((e) => e.event_type === 'execution.cancelled');
    expect(cancel).toMatchObject({ status: 'cancelled', context: { reason: 'auto_resume', cancelled_at: expect.any(String) } });
    // The successor starts after the cancel (which is written only while no live worker took a command of it meanwhile): linked by its start.
    const successors = (await db.query(`SELECT execution_id FROM core.event WHERE event_id = 1 AND event_type = 'execution.started' AND context->>'resumed_from' = $1`, [String(interrupted)])).rows;
    expect(successors).toHaveLength(1);
    const successor = Number(successors[0].execution_id);
    const started = (await api.events(successor))[0];
    expect(started).toMatchObject({ event_type: 'execution.started', context: { resumed_from: interrupted, input: { workload: { n: 7 }, args: { n: 7 } } } });
    expect(await api.wait(successor, 30_000)).toMatchObject({ status: 'completed', path: 'resume/held', result: { stdout: 'done 7\n' } });
    expect((await db.query(`SELECT status FROM core.command WHERE execution_id = $1`, [interrupted])).rows).toEqual([{ status: 'CANCELLED' }]);

    // The busy one was left to its worker, which finishes it once it may.
    expect((await http(base, 'GET', `/api/executions/${busy}`)).body.status).toBe('running');
    expect((await api.events(busy)).map((e: Json) => e.event_type)).not.toContain('execution.cancelled');
    await unlink(busyHold);
    expect(await api.wait(busy, 30_000)).toMatchObject({ status: 'completed', result: { stdout: 'done 8\n' } });
    expect(await survivor.stop()).toBe(0);
    // Its waits alone (the server down past the stale threshold, auto-resume's wait for every live
    // pool's beat) come to ~20 s; on a loaded 2-core CI machine it took 57-61 s of vitest's 60.
  }, 150_000);

  it('cancel mode: the interrupted execution is cancelled with reason auto_resume and not started again', async () => {
    const s1 = await startServer('cancel');
    const api = executionApi(base);
    const hold = join(dir, 'hold-2');
    await writeFile(hold, '');
    await registerHeld('resume/cancel', hold);
    const doomed = await startWorker();
    const interrupted = await api.run('resume/cancel', { n: 9 });
    await until('the doomed worker to claim it', async () => ((await claimedBy(interrupted)) === doomed.name ? true : undefined));
    const before = (await db.query(`SELECT max(execution_id) AS n FROM core.execution`)).rows[0].n;

    const s2 = await crashAndRestart(s1, [doomed], 'cancel');
    await unlink(hold);
    await startWorker();
    await waitForOutput(s2, 'auto-resume handled', 40_000);

    expect((await http(base, 'GET', `/api/executions/${interrupted}`)).body.status).toBe('cancelled');
    const cancel = (await api.events(interrupted)).find((e: Json) => e.event_type === 'execution.cancelled');
    expect(cancel.context).toMatchObject({ reason: 'auto_resume', cancelled_at: expect.any(String) });
    expect(cancel.context.resumed_as).toBeUndefined();
    expect((await db.query(`SELECT max(execution_id) AS n FROM core.execution`)).rows[0].n).toBe(before);
  }, 150_000);
});
