// Auto-resume at a restart leaves a backlog alone: an execution whose command is PENDING (issued,
// in the table, waiting because every worker is busy) lost nothing in the stop, a worker claims it
// when it has room. Cancelled, it lost its place in the queue, and restarted it ran again from its
// first step the steps it had done. An execution that did lose its work is still resumed: one
// whose command's holder is gone, and one with no command outstanding at all. Real server and
// database; pools that beat (or stop), no worker process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { beatAsAPool } from '../../helpers/interrupted.ts';
import { autoResume } from '../../../src/periodic/auto-resume.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTO_RESUME_MODE: 'cancel', SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '2' });
});
afterAll(async () => {
  await t?.close();
});

const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;
const run = async (): Promise<number> => (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/resume-backlog' })).body.execution_id as number;
const claim = async (worker: string): Promise<{ command_id: number; execution_id: number }[]> =>
  (await http(t.url, 'POST', '/api/worker/claim', { worker_id: worker, max: 1, wait_ms: 0 }, asWorker)).body.commands;

describe('auto-resume and a backlog', () => {
  it('leaves an execution whose command waits in the queue alone, and resumes one whose holder is gone or that has nothing outstanding', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: e, path: flow/resume-backlog }
workflow:
  - step: start
    tool: { name: work, kind: noop }
` })).status).toBe(201);
    for (const name of ['w-live', 'w-dead']) expect((await http(t.url, 'POST', '/api/worker/pool/register', { name, capacity: 1 }, asWorker)).status).toBe(200);
    const busy = await run();
    const lost = await run();
    const backlog = await run();
    const emptied = await run();
    // The live pool is busy with one command (and says so at each beat); the dead one held another and is gone.
    const [held] = await claim('w-live');
    expect(held.execution_id).toBe(busy);
    expect((await claim('w-dead'))[0].execution_id).toBe(lost);
    expect((await http(t.url, 'POST', '/api/worker/pool/deregister', { name: 'w-dead' }, asWorker)).status).toBe(200);
    const beat = beatAsAPool(t.url, { name: 'w-live', running: [held.command_id] }, 500);
    try {
      // What a stop can leave: a running execution with no command outstanding (none to claim, none held).
      await t.deps.db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE execution_id = $1`, [emptied]);
      expect((await t.deps.db.query(`SELECT status FROM core.command WHERE execution_id = $1`, [backlog])).rows).toEqual([{ status: 'PENDING' }]);
      // Longer than SVC_AUTO_RESUME_MIN_STALE_SECONDS without an event: what a restart would find.
      await new Promise((r) => setTimeout(r, 1_500));
      const resumed = await autoResume(t.deps);
      const handled = resumed.map((r) => r.execution_id);
      expect(handled, JSON.stringify(resumed)).not.toContain(backlog);
      expect(handled).not.toContain(busy);
      expect(await statusOf(backlog)).toBe('running');
      expect((await t.deps.db.query(`SELECT status FROM core.command WHERE execution_id = $1`, [backlog])).rows).toEqual([{ status: 'PENDING' }]);
      expect(resumed).toEqual(expect.arrayContaining([{ execution_id: lost, action: 'cancelled' }, { execution_id: emptied, action: 'cancelled' }]));
      expect(await statusOf(lost)).toBe('cancelled');
      expect(await statusOf(emptied)).toBe('cancelled');
      // The backlog is still the workers': the live pool takes it when it has room.
      expect((await claim('w-live'))[0].execution_id).toBe(backlog);
      for (const id of [busy, backlog]) expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' })).status).toBe(200);
    } finally {
      await beat.stop();
    }
  });
});
