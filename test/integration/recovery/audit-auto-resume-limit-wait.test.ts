// Auto-resume at a restart leaves alone an execution whose command waits for room on a task's
// limit (docs/flow-control.md: the command "stays PENDING until its key has a free slot and a
// token"): it waits on purpose, as a queued execution does, and nothing of it was interrupted.
// Cancelled (and in restart mode run again from its first step), it lost its place on the key and
// the steps it had done ran twice. Real server and database; a pool that beats, no worker process.
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

describe('auto-resume and a task limit', () => {
  it('does not cancel an execution whose command waits for room on its key while a live worker holds the slot', async () => {
    expect((await http(t.url, 'PUT', '/api/limits/exports', { concurrency: 1 })).status).toBe(200);
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: e, path: flow/resume-limit }
workflow:
  - step: start
    tool: { name: export, kind: noop, limit: { name: exports, key: acme } }
` })).status).toBe(201);
    expect((await http(t.url, 'POST', '/api/worker/pool/register', { name: 'w-live', capacity: 1 }, asWorker)).status).toBe(200);
    const beat = beatAsAPool(t.url, { name: 'w-live' }, 500);
    try {
      const holder = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/resume-limit' })).body.execution_id as number;
      const waiting = (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/resume-limit' })).body.execution_id as number;
      // The live pool holds the key's one slot; the second export waits for it.
      const claimed = await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w-live', max: 2, wait_ms: 0 }, asWorker);
      expect(claimed.body.commands.map((c: { execution_id: number }) => c.execution_id)).toEqual([holder]);
      expect((await http(t.url, 'GET', `/api/executions/${waiting}`)).body.limit_waits).toMatchObject([{ limit: 'exports', key: 'acme' }]);
      // Longer than SVC_AUTO_RESUME_MIN_STALE_SECONDS without an event: what a restart would find.
      await new Promise((r) => setTimeout(r, 1_500));
      const resumed = await autoResume(t.deps);
      expect(resumed.map((r) => r.execution_id), JSON.stringify(resumed)).not.toContain(waiting);
      expect(await statusOf(waiting)).toBe('running');
      expect((await http(t.url, 'GET', `/api/executions/${waiting}`)).body.limit_waits).toMatchObject([{ limit: 'exports', key: 'acme' }]);
      for (const id of [holder, waiting]) expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' })).status).toBe(200);
    } finally {
      await beat.stop();
    }
  });
});
