// Worker pools forgotten after a long silence (src/periodic/worker-pool-sweep.ts), on a real
// server, database and worker: pools killed without deregistering and pools deregistered long ago
// go; one that still holds a command, one heard from recently and a live one stay; a live worker
// whose pool was forgotten registers again at its next beat.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepWorkerPools, WORKER_POOL_FORGET_AFTER_S } from '../../../src/periodic/worker-pool-sweep.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const IDLE_HEARTBEAT_MS = 200;

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workers: 1, workerOptions: { idleHeartbeatIntervalMs: IDLE_HEARTBEAT_MS } });
});
afterAll(async () => {
  await s?.close();
});

async function pools(): Promise<{ name: string; status: string }[]> {
  return (await s.deps.db.query<{ name: string; status: string }>(`SELECT name, status FROM core.runtime WHERE kind = 'worker_pool' ORDER BY name`)).rows;
}

/** The pool's last beat (or deregistration) as if it was `ago` (an interval) ago. */
async function silence(name: string, ago: string): Promise<void> {
  await s.deps.db.query(`UPDATE core.runtime SET heartbeat_at = now() - $2::interval WHERE kind = 'worker_pool' AND name = $1`, [name, ago]);
}

describe('silent worker pools', () => {
  it('forgets the pools silent for a day that hold no command, killed or deregistered; keeps the others', async () => {
    for (const name of ['gone-killed', 'gone-stopped', 'holding', 'recent']) {
      expect((await http(s.url, 'POST', '/api/worker/pool/register', { name, capacity: 1 }, asWorker)).status).toBe(200);
    }
    expect((await http(s.url, 'POST', '/api/worker/pool/deregister', { name: 'gone-stopped' }, asWorker)).status).toBe(200);
    // `holding` went silent with a command claimed: the pool stays while the command is its.
    await s.register('apiVersion: svc/v1\nmetadata: { name: held, path: pools/held }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n');
    await s.deps.db.query(
      `WITH e AS (
         INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, last_event_id)
         SELECT nextval('core.execution_id_seq'), catalog_id, path, currval('core.execution_id_seq'), 'running', 0 FROM core.catalog WHERE path = 'pools/held'
         RETURNING execution_id, catalog_id)
       INSERT INTO core.command (execution_id, catalog_id, seq, step, status, input, worker_id, attempt, claimed_at, heartbeat_at)
       SELECT execution_id, catalog_id, 1, 'start', 'CLAIMED', '{}', 'holding', 1, now(), now() FROM e`,
    );
    for (const name of ['gone-killed', 'gone-stopped', 'holding']) await silence(name, '2 days');
    await silence('recent', '23 hours');

    expect(await sweepWorkerPools(s.deps, WORKER_POOL_FORGET_AFTER_S)).toEqual(['gone-killed', 'gone-stopped']);
    const left = (await pools()).map((p) => p.name);
    expect(left).toEqual(expect.arrayContaining(['holding', 'recent', s.workers[0].name]));
    expect(left).not.toContain('gone-killed');
    expect(left).not.toContain('gone-stopped');
    const listed = (await http(s.url, 'GET', '/api/worker/pools')).body.pools.map((p: { name: string }) => p.name);
    expect(listed).toEqual(left);
    // A forgotten pool is unknown: its beat is answered 404 (a worker registers again on it).
    expect((await http(s.url, 'POST', '/api/worker/pool/heartbeat', { name: 'gone-killed', status: 'ready' }, asWorker)).status).toBe(404);
    // The command's end lets its pool go at the next sweep.
    await s.deps.db.query(`UPDATE core.command SET status = 'COMPLETED' WHERE worker_id = 'holding'`);
    expect(await sweepWorkerPools(s.deps, WORKER_POOL_FORGET_AFTER_S)).toEqual(['holding']);
  });

  it('a live worker whose pool was forgotten registers again at its next beat', async () => {
    const w = s.workers[0];
    // Its beats come every 200 ms: silence it and sweep until a sweep falls between two of them.
    await until('the pool is forgotten', async () => {
      await silence(w.name, '2 days');
      return (await sweepWorkerPools(s.deps, WORKER_POOL_FORGET_AFTER_S)).includes(w.name);
    }, 10_000);
    await until('the pool is registered again', async () => (await pools()).some((p) => p.name === w.name && p.status === 'ready'), 20 * IDLE_HEARTBEAT_MS);
    // And it still works.
    const id = await s.run('pools/held', {});
    expect((await s.wait(id)).status).toBe('completed');
  });
});
