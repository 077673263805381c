// A schedule firing every second for about 12 s on two `svc server` processes sharing one
// database, while they are SIGKILLed (one, then both) and one is started again: every scheduled
// time from the first fire to the last is fired exactly once (catch_up: all brings back what fell
// in the downtime), and no execution was started twice for one time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { http } from '../../helpers/http.ts';
import { withTimeout } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
});
afterAll(async () => {
  await bed?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fireCount = async () => Number((await bed.db.query<{ n: string }>(`SELECT count(*) AS n FROM core.trigger_fire WHERE path = 'crash/tick'`)).rows[0].n);

describe('schedules across server crashes', () => {
  it('fires each second exactly once on two servers, through SIGKILLs and a restart', async () => {
    const a = await bed.server();
    const b = await bed.server();
    const yaml = `apiVersion: svc/v1
metadata: { name: tick, path: crash/tick }
triggers:
  - { name: every_second, kind: schedule, cron: "* * * * * *", overlap: allow, catch_up: all, max_catch_up: 60 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    // The servers tick before they are killed (on a loaded machine a fixed 4 s saw none).
    await until('3 fires', async () => (await fireCount()) >= 3, 30_000, 200);
    a.proc.kill('SIGKILL');
    await withTimeout(a.proc.exited, 10_000, 'server a exit');
    await sleep(2000);
    b.proc.kill('SIGKILL');
    await withTimeout(b.proc.exited, 10_000, 'server b exit');
    // Nobody ticks for 3 s: those fires are due when a server comes back.
    await sleep(3000);
    const c = await bed.server();
    // The server back fires what fell in the downtime and goes on: wait for a fire after it started.
    const back = new Date(Date.now() + 1000).toISOString();
    await until('a fire after the restart', async () => (await bed.db.query(`SELECT 1 FROM core.trigger_fire WHERE path = 'crash/tick' AND scheduled_time > $1`, [back])).rows.length > 0, 30_000, 200);
    await bed.stopAll();

    const { rows: fires } = await bed.db.query<{ fire_key: string; outcome: string; execution_id: string }>(
      `SELECT fire_key, outcome, execution_id FROM core.trigger_fire WHERE path = 'crash/tick' ORDER BY fire_key`,
    );
    expect(fires.length).toBeGreaterThanOrEqual(10);
    expect(fires.every((f) => f.outcome === 'started' && f.execution_id !== null)).toBe(true);
    // Contiguous: every second from the first fire to the last, none missing.
    const times = fires.map((f) => Date.parse(f.fire_key));
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1], `gap after ${fires[i - 1].fire_key}`).toBe(1000);
    // Once: one execution per fire, and no execution started by the trigger without its fire.
    const { rows: started } = await bed.db.query<{ fire_key: string; n: string }>(
      `SELECT context->'trigger'->>'fire_key' AS fire_key, count(*) AS n FROM core.event
        WHERE event_type = 'execution.started' AND context->'trigger'->>'name' = 'every_second' GROUP BY 1`,
    );
    expect(started.filter((s) => Number(s.n) !== 1)).toEqual([]);
    expect(started.map((s) => s.fire_key).sort()).toEqual(fires.map((f) => f.fire_key));
    expect(new Set(fires.map((f) => f.execution_id)).size).toBe(fires.length);
    void c;
  }, 90_000);
});
