// Durable timers on real `svc server` and `svc worker` processes (DESIGN.md "Waiting and
// control"): a 2 s timer whose every server and worker is SIGKILLed during the wait fires once
// when servers come back (two of them racing for it), and the executions complete; 1,000
// executions waiting on timers hold no worker slot and no database connection meanwhile.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
});
afterEach(async () => {
  await bed?.stopAll();
});
afterAll(async () => {
  await bed?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const timed = (path: string, wait: string) => `apiVersion: svc/v1
metadata: { name: timed, path: ${path} }
workflow:
  - step: start
    wait: { for: ${wait} }
    next: after
  - step: after
    tool: { name: t, kind: noop }
`;

async function statuses(path: string): Promise<Record<string, number>> {
  const { rows } = await bed.db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM core.execution WHERE path = $1 GROUP BY 1`, [path]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

describe('timers across crashes', () => {
  it('every server and worker SIGKILLed during a 2 s wait: each timer fires once after the restart, each execution completes', async () => {
    const a = await bed.server();
    const b = await bed.server();
    const w = await bed.worker(a.base, 2);
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: timed('crash/timer', '2s') })).status).toBe(201);
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await http(i % 2 ? b.base : a.base, 'POST', '/api/run/playbook', { path: 'crash/timer' })).body.execution_id);
    expect((await bed.db.query(`SELECT count(*)::int AS n FROM core.wait`)).rows[0].n).toBe(20);
    for (const p of [a.proc, b.proc]) p.kill('SIGKILL');
    await w.kill();
    await Promise.all([withTimeout(a.proc.exited, 10_000, 'a exit'), withTimeout(b.proc.exited, 10_000, 'b exit')]);
    // Nobody is up when the timers come due.
    await sleep(2500);
    expect(await statuses('crash/timer')).toEqual({ running: 20 });
    // Two servers come back and race for the due timers.
    const c = await bed.server();
    const d = await bed.server();
    await bed.worker(d.base, 2);
    await until('every execution completed', async () => (await statuses('crash/timer')).completed === 20, 30_000);
    const { rows } = await bed.db.query<{ execution_id: string; fired: number; issued: number; started: number }>(
      `SELECT execution_id, count(*) FILTER (WHERE event_type = 'timer.fired')::int AS fired,
              count(*) FILTER (WHERE event_type = 'command.issued')::int AS issued,
              count(*) FILTER (WHERE event_type = 'execution.started')::int AS started
         FROM core.event WHERE execution_id = ANY($1::bigint[]) GROUP BY 1`,
      [ids],
    );
    expect(rows).toHaveLength(20);
    expect(rows.filter((r) => r.fired !== 1 || r.issued !== 1 || r.started !== 1)).toEqual([]);
    expect((await bed.db.query(`SELECT count(*)::int AS n FROM core.wait`)).rows[0].n).toBe(0);
    void c;
  }, 120_000);

  it('1,000 executions waiting on timers hold no worker slot and no connection; another playbook runs meanwhile', async () => {
    const a = await bed.server();
    await bed.worker(a.base, 1);
    // Long enough that all 1,000 are waiting once the last has started: on a loaded CI machine the
    // starts took longer than a 6 s wait, and the first timers had fired before the count.
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: timed('crash/many', '20s') })).status).toBe(201);
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: timed('crash/quick', '1ms') })).status).toBe(201);
    const starts = await Promise.all(
      Array.from({ length: 50 }, async () => {
        for (let i = 0; i < 20; i++) {
          const r = await http(a.base, 'POST', '/api/run/playbook', { path: 'crash/many' });
          if (r.status !== 200) throw new Error(`start: ${r.status} ${JSON.stringify(r.body)}`);
        }
      }),
    );
    expect(starts).toHaveLength(50);
    expect((await bed.db.query(`SELECT count(*)::int AS n FROM core.wait w JOIN core.execution e USING (execution_id) WHERE e.path = 'crash/many'`)).rows[0].n).toBe(1000);
    // No command exists for a waiting step (a worker slot is held only by a claimed command)...
    expect((await bed.db.query(`SELECT count(*)::int AS n FROM core.command c JOIN core.execution e USING (execution_id) WHERE e.path = 'crash/many'`)).rows[0].n).toBe(0);
    // ...and the server's connections are its pool's, not one per wait.
    const { rows: conns } = await bed.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()`);
    expect(conns[0].n).toBeLessThan(40);
    // The one worker slot is free: another execution runs through while the 1,000 wait.
    const quick = (await http(a.base, 'POST', '/api/run/playbook', { path: 'crash/quick' })).body.execution_id as number;
    await until('the quick execution completed', async () => (await http(a.base, 'GET', `/api/executions/${quick}`)).body.status === 'completed', 10_000);
    expect((await statuses('crash/many')).running).toBe(1000);
    await until('the 1,000 completed', async () => (await statuses('crash/many')).completed === 1000, 60_000);
    const { rows } = await bed.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM core.event v JOIN core.execution e USING (execution_id) WHERE e.path = 'crash/many' AND v.event_type = 'timer.fired'`,
    );
    expect(rows[0].n).toBe(1000);
  }, 120_000);
});
