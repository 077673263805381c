// Timers, a schedule, a rate limit and debounce through real faults. Timers and a schedule's
// times fall due while PostgreSQL is down: each fires once after it is back. Executions queued on a rate are admitted while a
// server is SIGKILLed: each admitted once, no second over the rate. A debounced burst is sent
// while a server is SIGKILLed, the lost starts sent again to the other with their keys: one
// execution per window, run once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { FaultBed } from './audit-fault-bed.ts';

const bed = new FaultBed({ SVC_AUTO_RESUME_MIN_STALE_SECONDS: '3600' });
const TIMED = `apiVersion: svc/v1
metadata: { name: timed, path: fault/timed }
workflow:
  - step: nap
    wait: { for: 2s }
    next: done
  - step: done
    tool: { name: t, kind: noop }
`;
const RATED = `apiVersion: svc/v1
metadata: { name: rated, path: fault/rated }
concurrency: { limit: paced }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
const TICKING = `apiVersion: svc/v1
metadata: { name: ticking, path: fault/ticking }
triggers:
  - { name: every_second, kind: schedule, cron: "* * * * * *", overlap: allow, catch_up: all, max_catch_up: 60 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
const DEBOUNCED = `apiVersion: svc/v1
metadata: { name: debounced, path: fault/debounced }
workload: { c: x, n: 0 }
debounce: { key: "{{ workload.c }}", seconds: 8 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

beforeAll(async () => {
  await bed.open(2, 1);
  const r = await http(bed.servers[0].base, 'PUT', '/api/limits/paced', { rate: { limit: 4, period_seconds: 1, burst: 2 } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  for (const p of [TIMED, RATED, DEBOUNCED, TICKING]) await bed.register(p);
}, 120_000);
afterAll(() => bed.close(), 60_000);

const start = async (i: number, path: string, key: string, payload: Record<string, unknown> = {}) => {
  const a = await bed.sendUntilAnswered(i % 2, '/api/run/playbook', JSON.stringify({ path, payload }), { 'idempotency-key': key });
  expect(a.status, JSON.stringify(a.body)).toBe(200);
  return a.body;
};

async function completed(ids: readonly number[]): Promise<void> {
  await until('every execution finished', async () => (await bed.count(`SELECT count(*) AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND finished_at IS NULL`, [ids])) === 0, 90_000, 250);
  expect(await bed.count(`SELECT count(*) AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status <> 'completed'`, [ids])).toBe(0);
}

/** Events of `type` per execution of `ids` that are not exactly one. */
async function notOnce(ids: readonly number[], type: string): Promise<unknown[]> {
  const { rows } = await bed.db.query(
    `SELECT x.id, count(v.event_id)::int AS n FROM unnest($1::bigint[]) AS x(id) LEFT JOIN core.event v ON v.execution_id = x.id AND v.event_type = $2 GROUP BY 1 HAVING count(v.event_id) <> 1`,
    [ids, type],
  );
  return rows;
}

describe('timers, rates and debounce through faults', () => {
  it('timers due while PostgreSQL is down fire once after it is back', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await start(i, 'fault/timed', `timed-${i}`)).execution_id);
    // By its timer.set event, not its core.wait row: under load a start's 2 s may pass before the
    // last start, and a fired timer's row is gone (it fires once all the same, checked below).
    await until('every timer set', async () => (await bed.count(`SELECT count(*) AS n FROM core.event WHERE execution_id = ANY($1::bigint[]) AND event_type = 'timer.set'`, [ids])) === ids.length, 30_000, 100);
    await bed.stopPostgres();
    // Past every wake-up.
    await new Promise((r) => setTimeout(r, 3_500));
    await bed.startPostgres();
    await completed(ids);
    expect(await notOnce(ids, 'timer.fired')).toEqual([]);
    expect(await notOnce(ids, 'command.completed')).toEqual([]);
    bed.expectNo500();
  }, 120_000);

  it('a schedule whose times fall due while PostgreSQL is down fires each of them once after it is back, on two servers', async () => {
    const fires = async () => (await bed.db.query<{ fire_key: string; outcome: string; execution_id: string | null }>(`SELECT fire_key, outcome, execution_id FROM core.trigger_fire WHERE path = 'fault/ticking' ORDER BY fire_key`)).rows;
    await until('3 fires', async () => (await fires()).length >= 3, 30_000, 100);
    await bed.stopPostgres();
    await new Promise((r) => setTimeout(r, 3_000));
    await bed.startPostgres();
    const back = new Date(Date.now() + 2_000).toISOString();
    await until('a fire after the restart', async () => (await fires().catch(() => [])).some((f) => f.fire_key > back), 30_000, 200);
    // Stopped, so that the last fires are not mid-write when read.
    const pause = await http(bed.servers[0].base, 'POST', '/api/triggers/fault/ticking/every_second/pause');
    expect(pause.status, JSON.stringify(pause.body)).toBe(200);
    const all = await fires();
    expect(all.every((f) => f.outcome === 'started' && f.execution_id !== null)).toBe(true);
    const times = all.map((f) => Date.parse(f.fire_key));
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1], `gap after ${all[i - 1].fire_key}`).toBe(1000);
    const ids = all.map((f) => Number(f.execution_id));
    expect(new Set(ids).size).toBe(ids.length);
    await completed(ids);
    bed.expectNo500();
  }, 120_000);

  it('executions admitted on a rate while a server is SIGKILLed: each admitted once, no second over the rate', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 24; i++) ids.push((await start(i, 'fault/rated', `rated-${i}`)).execution_id);
    await until('a few admitted', async () => (await bed.count(`SELECT count(*) AS n FROM core.event WHERE execution_id = ANY($1::bigint[]) AND event_type = 'execution.admitted'`, [ids])) >= 4, 30_000, 50);
    await bed.killServer(0);
    await new Promise((r) => setTimeout(r, 1_000));
    await bed.startServer(0);
    await completed(ids);
    expect(await notOnce(ids, 'execution.admitted')).toEqual([]);
    // Admitted by the bucket: at most burst + limit in any second, by when each took its token (context.at).
    const { rows } = await bed.db.query<{ at: Date }>(`SELECT (context->>'at')::timestamptz AS at FROM core.event WHERE execution_id = ANY($1::bigint[]) AND event_type = 'execution.admitted' ORDER BY 1`, [ids]);
    const times = rows.map((r) => r.at.getTime());
    const most = Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 1000).length));
    console.log(`most admissions in a second: ${most}`);
    expect(most).toBeLessThanOrEqual(4 + 2);
    bed.expectNo500();
  }, 120_000);

  it('a debounced burst sent while a server is SIGKILLed, the lost starts sent again: one execution per window, run once', async () => {
    const answers: { c: string; id: number }[] = [];
    const sent = ['a', 'b', 'c'].flatMap((c) => Array.from({ length: 10 }, async (_, n) => answers.push({ c, id: (await start(0, 'fault/debounced', `deb-${c}-${n}`, { c, n })).execution_id })));
    await new Promise((r) => setTimeout(r, 30));
    await bed.killServer(0);
    await Promise.all(sent);
    await bed.startServer(0);
    const byKey = new Map<string, Set<number>>();
    for (const a of answers) byKey.set(a.c, (byKey.get(a.c) ?? new Set()).add(a.id));
    expect([...byKey.values()].map((s) => s.size), JSON.stringify(answers)).toEqual([1, 1, 1]);
    const ids = [...byKey.values()].map((s) => [...s][0]);
    await completed(ids);
    expect(await bed.count(`SELECT count(*) AS n FROM core.execution WHERE path = 'fault/debounced'`)).toBe(3);
    expect(await notOnce(ids, 'execution.admitted')).toEqual([]);
    expect(await notOnce(ids, 'command.completed')).toEqual([]);
    bed.expectNo500();
  }, 120_000);
});
