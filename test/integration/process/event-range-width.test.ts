// The event log's ranges at the width asked for (docs/scaling.md, "The event log: ranges and
// retention") on a real `svc server`: on a fresh database the migration's ranges of a million ids
// are made again at SVC_EVENT_PARTITION_EXECUTIONS, so retention drops the first executions once
// they expire (not after the millionth); when the setting changes, the empty ranges ahead are made
// again at the new width and the range in use stays.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
beforeAll(async () => {
  bed = await ServerProcesses.open({ SVC_PARTITION_INTERVAL_SECONDS: '1' });
});
afterEach(async () => {
  await bed?.stopAll();
});
afterAll(async () => {
  await bed?.close();
});

type Range = [number, number];

async function ranges(): Promise<Range[]> {
  const { rows } = await bed.db.query<{ bound: string }>(
    `SELECT pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'core.event'::regclass`,
  );
  return rows
    .flatMap((r) => {
      const m = /FROM \('?(\d+)'?\) TO \('?(\d+)'?\)/.exec(r.bound);
      return m ? [[Number(m[1]), Number(m[2])] as Range] : [];
    })
    .sort((a, b) => a[0] - b[0]);
}

async function partitionsOf(ids: number[]): Promise<string[]> {
  const { rows } = await bed.db.query<{ part: string }>(`SELECT DISTINCT tableoid::regclass::text AS part FROM core.event WHERE execution_id = ANY($1::bigint[]) ORDER BY 1`, [ids]);
  return rows.map((r) => r.part);
}

const playbook = `apiVersion: svc/v1
metadata: { name: ranged, path: ranges/one }
workflow:
  - step: start
    tool: { name: n, kind: noop }
`;

describe('event log ranges at the width asked for', () => {
  it('a fresh database gets ranges of SVC_EVENT_PARTITION_EXECUTIONS ids, and retention drops its first executions once they expire', async () => {
    // A second's retention: each range goes about a second after its last execution finished.
    const s = await bed.server({ SVC_EVENT_PARTITION_EXECUTIONS: '10', SVC_RETENTION_DAYS: String(1 / 86_400) });
    await until('the ranges made again at 10 ids', async () => JSON.stringify(await ranges()) === JSON.stringify([[0, 10], [10, 20], [20, 30]]), 15_000);
    await bed.worker(s.base, 4);
    expect((await http(s.base, 'POST', '/api/catalog/playbook', { content: playbook })).status).toBe(201);
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push((await http(s.base, 'POST', '/api/run/playbook', { path: 'ranges/one' })).body.execution_id);
    expect(ids).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const completed = async (of: number[]) =>
      (await bed.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status = 'completed'`, [of])).rows[0].n;
    // Ids 10-12 are the range in use: kept, whole, however old.
    const kept = ids.filter((id) => id >= 10);
    await until('the first range dropped by retention', async () => !(await ranges()).some(([lo]) => lo === 0), 30_000);
    expect(await completed(kept)).toBe(3);
    expect((await http(s.base, 'GET', `/api/executions/${ids[0]}`)).status).toBe(404);
    expect((await bed.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id < 10`)).rows[0].n).toBe(0);
    expect(await partitionsOf(kept)).toEqual(['core.event_p0000000000000000010']);
    expect((await http(s.base, 'GET', `/api/executions/${kept[0]}`)).body.status).toBe('completed');
    expect((await bed.db.query(`SELECT count(*)::int AS n FROM core.event_default`)).rows[0].n).toBe(0);
    expect(await ranges()).toEqual([[10, 20], [20, 30], [30, 40]]);
  });

  it('a changed width: the empty ranges ahead are made again at it, the range in use stays', async () => {
    const s = await bed.server({ SVC_EVENT_PARTITION_EXECUTIONS: '20' });
    // The last id is 12: [10, 20) is in use; [20, 30) and [30, 40) were empty.
    await until('the ranges ahead made again at 20 ids', async () => JSON.stringify(await ranges()) === JSON.stringify([[10, 20], [20, 40], [40, 60]]), 15_000);
    await bed.worker(s.base, 2);
    // The restart skipped the ids the last server had fetched ahead; the next is still in [10, 20).
    const id = (await http(s.base, 'POST', '/api/run/playbook', { path: 'ranges/one' })).body.execution_id;
    expect(id).toBeGreaterThan(12);
    expect(id).toBeLessThan(20);
    await until('it completed', async () => (await http(s.base, 'GET', `/api/executions/${id}`)).body.status === 'completed', 15_000);
    expect(await partitionsOf([id])).toEqual(['core.event_p0000000000000000010']);
    // Run after run, nothing more changes.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await ranges()).toEqual([[10, 20], [20, 40], [40, 60]]);
  });
});
