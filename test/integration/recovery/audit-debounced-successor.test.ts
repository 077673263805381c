// A debounced execution runs with its burst's last start: its payload and priority (the result and
// context of its execution.admitted; docs/flow-control.md, "Debounce"). What succeeds it is started
// as it ran: auto-resume's restart with that payload and priority (docs/operations.md, "the same
// workload, labels and priority"), a retry at that priority. Restarted with the burst's first
// start, the later starts' payload was lost. Real server and database; a pool that beats, no worker.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { interruptAsAStopDoes, whileAPoolBeats } from '../../helpers/interrupted.ts';
import { autoResume } from '../../../src/periodic/auto-resume.ts';

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTO_RESUME_MODE: 'restart', SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '1' });
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;
const startedInput = async (id: number) => (await http(t.url, 'GET', `/api/events/${id}`)).body.events[0].context.input;

/** A debounced execution of `path` admitted with the burst's last start ({c, n: 2}, priority 8); its first start was {c, n: 1} at the playbook's priority. */
async function debouncedBurst(path: string, c: string): Promise<number> {
  const first = await http(t.url, 'POST', '/api/run/playbook', { path, payload: { c, n: 1 } });
  const later = await http(t.url, 'POST', '/api/run/playbook', { path, payload: { c, n: 2 }, priority: 8 });
  expect(later.body).toMatchObject({ execution_id: first.body.execution_id, debounced: true });
  const id: number = first.body.execution_id;
  await expect.poll(() => statusOf(id), { timeout: 15_000 }).toBe('running');
  expect((await db.query('SELECT priority FROM core.command WHERE execution_id = $1', [id])).rows).toEqual([{ priority: 8 }]);
  return id;
}

describe('what succeeds a debounced execution', () => {
  it('auto-resume restarts it with the payload and priority it ran with, the burst\'s last', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: d, path: flow/debounced-resume }
debounce: { key: "{{ workload.c }}", seconds: 2 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` })).status).toBe(201);
    await whileAPoolBeats(t.url, async () => {
      const id = await debouncedBurst('flow/debounced-resume', 'acme');
      // A pool that claimed its command is gone and nothing moves: what a stop leaves.
      await interruptAsAStopDoes(t.url, id);
      const resumed = await autoResume(t.deps);
      const mine = resumed.find((r) => r.execution_id === id);
      expect(mine, JSON.stringify(resumed)).toMatchObject({ action: 'restarted' });
      const successor = mine!.resumed_as!;
      expect(await startedInput(successor)).toMatchObject({ args: { c: 'acme', n: 2 }, priority: 8 });
      await http(t.url, 'POST', `/api/executions/${successor}/cancel`, { reason: 'test over' });
    });
  });

  it('a retry runs at the priority it ran with, the burst\'s last', async () => {
    const id = await debouncedBurst('flow/debounced-resume', 'globex');
    expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'to retry' })).status).toBe(200);
    const retried = await http(t.url, 'POST', `/api/executions/${id}/retry`, {});
    expect(retried.status).toBe(201);
    expect(await startedInput(retried.body.execution_id)).toMatchObject({ args: { c: 'globex', n: 2 }, priority: 8 });
    await http(t.url, 'POST', `/api/executions/${retried.body.execution_id}/cancel`, { reason: 'test over' });
  });
});
