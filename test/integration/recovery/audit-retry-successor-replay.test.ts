// Auto-resume's restart of an interrupted retry (docs/operations.md, "Auto-resume at restart": a
// new execution "with the same workload, labels and priority"). The successor was started without
// the outcomes the retry replayed: it ran again every step the retry had taken from the execution
// it retried (DESIGN.md: those are "replayed from the old log, not run"). Here an approval given
// once was asked for again after a server stop. The successor now starts with the retry's
// recorded outcomes too. Real server and database; a pool that beats, no worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { interruptAsAStopDoes, whileAPoolBeats } from '../../helpers/interrupted.ts';
import { until } from '../../helpers/until.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { autoResume } from '../../../src/periodic/auto-resume.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTO_RESUME_MODE: 'restart', SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '1' });
});
afterAll(async () => {
  await t?.close();
});

const post = (path: string, body: unknown = {}) => http(t.url, 'POST', path, body);
const eventsOf = (id: number): Promise<Json[]> => executionApi(t.url).events(id);
const issued = async (id: number) => (await eventsOf(id)).some((e) => e.event_type === 'command.issued');

const yaml = `
apiVersion: svc/v1
metadata: { name: approved, path: resume_retry/approved }
workflow:
  - step: approve
    wait: { signal: approval }
    next: work
  - step: work
    tool: { name: w, kind: noop }
`;

describe('auto-resume of an interrupted retry', () => {
  it('restarts it with the outcomes it replayed: an approval given once is not asked for again', async () => {
    expect((await post('/api/catalog/playbook', { content: yaml })).status).toBe(201);
    const first: number = (await post('/api/run/playbook', { path: 'resume_retry/approved' })).body.execution_id;
    await until(`execution ${first} waits`, async () => (await eventsOf(first)).some((e) => e.event_type === 'signal.awaited'), 10_000);
    expect((await post(`/api/executions/${first}/signals/approval`, { payload: { who: 'alice' } })).status).toBe(202);
    await until(`execution ${first} issues work`, () => issued(first), 10_000);
    expect((await post(`/api/executions/${first}/cancel`, { reason: 'to retry' })).body).toMatchObject({ status: 'cancelled' });

    const retried = await post(`/api/executions/${first}/retry`);
    expect(retried.body).toMatchObject({ from_step: 'work', replayed: ['approve'] });
    const retry = retried.body.execution_id as number;
    await until(`execution ${retry} issues work`, () => issued(retry), 10_000);

    await whileAPoolBeats(t.url, async () => {
      await interruptAsAStopDoes(t.url, retry);
      const resumed = await autoResume(t.deps);
      const mine = resumed.find((r) => r.execution_id === retry);
      expect(mine, JSON.stringify(resumed)).toMatchObject({ action: 'restarted' });
      const successor = mine!.resumed_as!;
      await until(`execution ${successor} issues work`, () => issued(successor), 10_000);
      const events = await eventsOf(successor);
      expect(events.map((e) => e.event_type)).not.toContain('signal.awaited');
      expect(events.filter((e) => e.event_type === 'step.replayed').map((e) => [e.step, e.result])).toEqual([['approve', { who: 'alice' }]]);
      await post(`/api/executions/${successor}/cancel`, { reason: 'test over' });
    });
  });
});
