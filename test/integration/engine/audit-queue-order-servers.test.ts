// Within a key, queued executions are admitted by priority, then age (docs/flow-control.md,
// "Priority and fairness"), also when two servers start them: execution ids are handed out in
// blocks per server (DESIGN.md: "ids are allocated in blocks per server and are not in start
// order"), so the id is not the age. Real servers on one database, no worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let other: Awaited<ReturnType<typeof startSecondServer>>;
beforeAll(async () => {
  t = await startTestApp();
  other = await startSecondServer(t);
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

const statusOf = async (id: number): Promise<string> => (await http(t.url, 'GET', `/api/executions/${id}`)).body.status;

describe('a key queued on from two servers', () => {
  it('admits the execution started first, whatever its id', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: fifo, path: flow/fifo }
concurrency: { limit: 1, key: acme }
workflow:
  - step: start
    wait: { for: 1h }
` })).status).toBe(201);
    const start = async (url: string) => (await http(url, 'POST', '/api/run/playbook', { path: 'flow/fifo' })).body.execution_id as number;
    // This server's second start within a second fetches two ids and keeps one for its next start.
    const holder = await start(t.url);
    const second = await start(t.url);
    // The other server's start, then this server's third: it takes the id kept, lower than the other's.
    const elsewhere = await start(other.url);
    const third = await start(t.url);
    expect(third, 'ids out of start order (the case at hand)').toBeLessThan(elsewhere);
    expect(await Promise.all([holder, second, elsewhere, third].map(statusOf))).toEqual(['running', 'queued', 'queued', 'queued']);

    const admittedNext = async (ended: number, candidates: number[]) => {
      expect((await http(t.url, 'POST', `/api/executions/${ended}/cancel`, { reason: 'next' })).status).toBe(200);
      let running: number[] = [];
      await expect.poll(async () => {
        running = [];
        for (const id of candidates) if ((await statusOf(id)) === 'running') running.push(id);
        return running.length;
      }, { timeout: 15_000 }).toBe(1);
      return running[0];
    };
    expect(await admittedNext(holder, [second, elsewhere, third])).toBe(second);
    expect(await admittedNext(second, [elsewhere, third]), 'started before the third').toBe(elsewhere);
    for (const id of [elsewhere, third]) await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' });
  });
});
