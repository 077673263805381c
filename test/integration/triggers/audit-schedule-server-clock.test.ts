// A server whose clock ran ahead of PostgreSQL's fired schedules early, by its skew: 30 s ahead, a
// time scheduled for :00 started at :30 of the minute before (by the database's clock, which the
// fire's own record keeps); its backfill and fire by hand took times still to come by the
// database's clock for past ones (started early, their schedule's own fire swallowed), and a resume
// and a registration put the next fire its skew late. All now count on the database's clock, as waits do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { startSkewedServer } from '../../helpers/skewed-server.ts';
import { until } from '../../helpers/until.ts';

const AHEAD_MS = 30_000;
const PATH = 'audit/sched_clock';

let ps: ServerProcesses;
let stop = () => {};
let serverBase = '';
beforeAll(async () => {
  ps = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  stop();
  await ps?.close();
});

describe('a schedule on a server whose clock is ahead of the database', () => {
  it('fires each time when the database clock reaches it, not its skew early', async () => {
    const server = await startSkewedServer(ps, AHEAD_MS);
    stop = server.kill;
    serverBase = server.base;
    const registeredAt = Date.now(); // the test's clock is the database's (one host)
    const reg = await http(server.base, 'POST', '/api/catalog/playbook', { content: `
apiVersion: svc/v1
metadata: { name: sched_clock, path: ${PATH} }
triggers:
  - { name: tick, kind: schedule, cron: "*/2 * * * * *", catch_up: none }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    type Fire = { fire_key: string; early_ms: number };
    const fires = async () =>
      (await ps.db.query<Fire>(`SELECT fire_key, (EXTRACT(EPOCH FROM scheduled_time - fired_at) * 1000)::float8 AS early_ms FROM core.trigger_fire WHERE path = $1 ORDER BY scheduled_time`, [PATH])).rows;
    await until("three fires", async () => (await fires()).length >= 3, 70_000);
    const made = await fires();
    // The first fire is its next time after the registration by the database clock, not AHEAD_MS later.
    expect(Date.parse(made[0].fire_key) - registeredAt, made[0].fire_key).toBeLessThan(5_000);
    // Each committed at or after its time on the database's clock (fired_at is clock_timestamp()).
    for (const f of made) expect(f.early_ms, `${f.fire_key} fired ${Math.round(f.early_ms)} ms before its time`).toBeLessThanOrEqual(0);
    // And on time by it: within a look or two (a tick sleeps until the next fire, at most 1 s).
    for (const f of made) expect(f.early_ms, `${f.fire_key} fired ${-Math.round(f.early_ms)} ms late`).toBeGreaterThan(-5_000);
  }, 120_000);

  it('refuses a backfill or a fire key reaching past now by the database clock, and resumes at its next time by it', async () => {
    const base = serverBase;
    const url = (action: string) => `/api/triggers/${PATH}/tick/${action}`;
    // 20 s ahead of the database (the test's clock): 10 s ago for the server.
    const coming = new Date(Math.ceil((Date.now() + 20_000) / 2000) * 2000);
    const before = await ps.db.query(`SELECT count(*)::int AS n FROM core.trigger_fire WHERE path = $1 AND scheduled_time >= $2`, [PATH, coming]);
    const backfill = await http(base, 'POST', url('backfill'), { from: new Date(coming.getTime() - 4000).toISOString(), to: new Date(coming.getTime() + 2000).toISOString() });
    expect(backfill.status, JSON.stringify(backfill.body)).toBe(422);
    expect(JSON.stringify(backfill.body.detail)).toContain('to: is after now');
    const fire = await http(base, 'POST', url('fire'), { fire_key: coming.toISOString() });
    expect(fire.status, JSON.stringify(fire.body)).toBe(422);
    expect(JSON.stringify(fire.body.detail)).toContain('fire_key: ');
    const after = await ps.db.query(`SELECT count(*)::int AS n FROM core.trigger_fire WHERE path = $1 AND scheduled_time >= $2`, [PATH, coming]);
    expect(after.rows[0].n).toBe(before.rows[0].n);

    expect((await http(base, 'POST', url('pause'))).status).toBe(200);
    const resumed = await http(base, 'POST', url('resume'));
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const next = Date.parse(resumed.body.next_fires[0]);
    // Its next time after now by the database clock (every 2 s), not AHEAD_MS later.
    expect(next - Date.now(), resumed.body.next_fires[0]).toBeLessThan(5_000);
  }, 60_000);
});
