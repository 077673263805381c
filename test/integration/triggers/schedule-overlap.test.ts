// Overlap and catch-up of schedules on a real PostgreSQL, ticked by hand with an injected clock
// (the app starts no timekeeper of its own here). A run stays running (its task waits for a
// worker, and none runs) until the test cancels it, which ends it. docs/triggers.md, "Overlap"
// and "Catch-up and the misfire grace".
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';
import { pauseTrigger } from '../../../src/triggers/trigger-operations.ts';
import { queuedThrough, unfinishedRuns } from '../../../src/db/trigger.repo.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { routeEvents } from '../../../actors/route-events.ts';
import { startExecutions } from '../../../actors/start-execution.ts';
import { EVENT } from '../../../machines/event-types.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});
// Each test ticks its own times: the schedules of the tests before it no longer fire.
afterEach(async () => {
  await a.deps.db.query(`UPDATE core.trigger SET paused = true WHERE path LIKE 'overlap/%'`);
});

async function register(path: string, trigger: string, more = ''): Promise<void> {
  const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: overlap, path: ${path} }
${more}triggers:
  - { name: t, kind: schedule, ${trigger} }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

async function setNextFire(path: string, at: Date): Promise<void> {
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1 AND name = 't'`, [path, at]);
}

async function nextFire(path: string): Promise<string> {
  const { rows } = await a.deps.db.query<{ next_fire_at: Date }>(`SELECT next_fire_at FROM core.trigger WHERE path = $1 AND name = 't'`, [path]);
  return rows[0]!.next_fire_at.toISOString();
}

type FireSeen = { fire_key: string; outcome: string; execution_id: string | null; error: string | null; status: string | null };

async function fires(path: string): Promise<FireSeen[]> {
  const { rows } = await a.deps.db.query<FireSeen>(
    `SELECT f.fire_key, f.outcome, f.execution_id, f.error, x.status FROM core.trigger_fire f
       LEFT JOIN core.execution x ON x.execution_id = f.execution_id
      WHERE f.path = $1 ORDER BY f.fire_key`,
    [path],
  );
  return rows;
}

async function listed(path: string): Promise<Json> {
  return (await http(a.url, 'GET', '/api/triggers?kind=schedule')).body.triggers.find((t: Json) => t.path === path);
}

async function cancel(executionId: string | null): Promise<void> {
  const res = await http(a.url, 'POST', `/api/executions/${executionId}/cancel`, {});
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

/** The running execution of `path` (exactly one). */
async function runningOne(path: string): Promise<FireSeen> {
  const running = (await fires(path)).filter((f) => f.status === 'running');
  expect(running, JSON.stringify(running)).toHaveLength(1);
  return running[0]!;
}

const tick = (at: Date) => runScheduleTick(a.deps, () => at);
const plus = (t: Date, ms: number) => new Date(t.getTime() + ms);
const iso = (t: Date) => t.toISOString();
/**
 * A whole ten seconds an hour before now. Runs end (cancelled) at the database's clock, now: after
 * every tick of these tests, as a run that ends after the due times waiting for it.
 */
const anHourAgo = () => new Date(Math.floor((Date.now() - 3600_000) / 10_000) * 10_000);

describe('overlap skip and cancel_previous find every unfinished run of the trigger', () => {
  /** A long run, then a backfill of a past range whose twelve runs end (cancelled): all fired after the long one. */
  async function longRunThenTwelveShort(path: string, t0: Date): Promise<string> {
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    const long = await runningOne(path);
    const backfill = await http(a.url, 'POST', `/api/triggers/${path}/t/backfill`, { from: '2020-01-01T00:00:00Z', to: '2020-01-01T00:06:00Z' });
    expect(backfill.status, JSON.stringify(backfill.body)).toBe(200);
    expect(backfill.body.execution_ids).toHaveLength(12);
    for (const id of backfill.body.execution_ids) await cancel(String(id));
    return long.execution_id!;
  }

  it('skip: a due time while the first run still runs is skipped, however many runs of the trigger started and ended since', async () => {
    const path = 'overlap/skip_many';
    await register(path, `cron: "*/30 * * * * *", overlap: skip`);
    const t0 = anHourAgo();
    const long = await longRunThenTwelveShort(path, new Date(Math.ceil(t0.getTime() / 30_000) * 30_000));
    const due = new Date(Math.ceil(t0.getTime() / 30_000) * 30_000 + 30_000);
    const report = await tick(plus(due, 10));
    expect(report).toMatchObject({ started: 0, skipped: 1 });
    const skipped = (await fires(path)).find((f) => f.fire_key === iso(due))!;
    expect(skipped).toMatchObject({ outcome: 'skipped', execution_id: null });
    expect(skipped.error).toContain(`execution ${long} still running`);
    expect(await listed(path)).toMatchObject({ fires: 13, skipped: 1 });
  });

  it('skip: a run auto-resume cancelled to restart is still the trigger\'s run before its successor starts, and the successor after', async () => {
    // Auto-resume's restart is two transactions (src/periodic/auto-resume.ts resumeOne): a tick
    // between them found no unfinished run and started one beside the successor to come.
    const path = 'overlap/skip_restarting';
    await register(path, `cron: "*/30 * * * * *", overlap: skip`);
    const t0 = new Date(Math.ceil(anHourAgo().getTime() / 30_000) * 30_000);
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    const root = Number((await runningOne(path)).execution_id);
    await routeEvents(a.deps, [{ execution_id: root, event_type: EVENT.executionCancelled, context: { reason: 'auto_resume', cancelled_at: new Date().toISOString(), successor: true } }]);
    expect(await tick(plus(t0, 30_010))).toMatchObject({ started: 0, skipped: 1 });
    expect((await fires(path)).find((f) => f.fire_key === iso(plus(t0, 30_000)))!.error).toContain(`execution ${root} still restarting`);
    const [successor] = await startExecutions(a.deps, [{ path, payload: {}, origin: { resumed_from: root }, ownHandles: true, successor: true }]);
    if (!('executionId' in successor)) throw successor;
    expect(await tick(plus(t0, 60_010))).toMatchObject({ started: 0, skipped: 1 });
    expect((await fires(path)).find((f) => f.fire_key === iso(plus(t0, 60_000)))!.error).toContain(`execution ${successor.executionId} still running`);
    await cancel(String(successor.executionId));
    expect(await tick(plus(t0, 90_010))).toMatchObject({ started: 1, skipped: 0 });
  });

  it('cancel_previous: the first run is cancelled at the next due time, however many runs started and ended since', async () => {
    const path = 'overlap/cancel_many';
    await register(path, `cron: "*/30 * * * * *", overlap: cancel_previous`);
    const t0 = new Date(Math.ceil(anHourAgo().getTime() / 30_000) * 30_000);
    const long = await longRunThenTwelveShort(path, t0);
    await tick(plus(t0, 30_010));
    const now = await fires(path);
    expect(now.find((f) => f.execution_id === long)!.status).toBe('cancelled');
    expect((await runningOne(path)).fire_key).toBe(iso(plus(t0, 30_000)));
  });

  it('cancel_previous: a due time whose fire the inputs refuse starts nothing and cancels nothing', async () => {
    const path = 'overlap/cancel_refused';
    // The fire at :00 starts; the one at :30 is refused (its sec is not in the enum).
    await register(path, `cron: "*/30 * * * * *", overlap: cancel_previous, payload: { sec: "{{ trigger.scheduled_time[17:19] }}" }`, 'inputs: { sec: { type: string, enum: ["00"] } }\n');
    const t0 = new Date(Math.ceil(anHourAgo().getTime() / 60_000) * 60_000);
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    const first = await runningOne(path);
    expect(await tick(plus(t0, 30_010))).toMatchObject({ started: 0, refused: 1 });
    expect((await fires(path)).find((f) => f.fire_key === iso(plus(t0, 30_000)))).toMatchObject({ outcome: 'refused', execution_id: null });
    expect((await runningOne(path)).execution_id).toBe(first.execution_id);
  });

  it('cancel_previous: a due time whose fire key was fired already (by hand) is a duplicate and cancels nothing', async () => {
    const path = 'overlap/cancel_duplicate';
    await register(path, `cron: "*/30 * * * * *", overlap: cancel_previous`);
    const t0 = new Date(Math.ceil(anHourAgo().getTime() / 30_000) * 30_000);
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    const first = await runningOne(path);
    const byHand = await http(a.url, 'POST', `/api/triggers/${path}/t/fire`, { fire_key: iso(plus(t0, 30_000)) });
    expect(byHand.status, JSON.stringify(byHand.body)).toBe(202);
    expect(await tick(plus(t0, 30_010))).toMatchObject({ started: 0, raced: 0 });
    const now = await fires(path);
    expect(now.map((f) => [f.execution_id, f.status])).toEqual([
      [first.execution_id, 'running'],
      [byHand.body.execution_id, 'running'],
    ]);
    expect(await nextFire(path)).toBe(iso(plus(t0, 60_000)));
  });

  it('cancel_previous: the cancel is an event written with the fire that replaces the run, naming it', async () => {
    const path = 'overlap/cancel_inbox';
    await register(path, `cron: "*/30 * * * * *", overlap: cancel_previous`);
    const t0 = new Date(Math.ceil(anHourAgo().getTime() / 30_000) * 30_000);
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    const first = await runningOne(path);
    await tick(plus(t0, 30_010));
    const { rows } = await a.deps.db.query<{ event_type: string; context: Json }>(
      `SELECT event_type, context FROM core.event WHERE execution_id = $1 AND event_type = 'execution.cancelled'`,
      [first.execution_id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.context).toMatchObject({ reason: 'trigger t: overlap cancel_previous', trigger: { name: 't', kind: 'schedule', fire_key: iso(plus(t0, 30_000)) } });
    expect((await fires(path)).find((f) => f.execution_id === first.execution_id)!.status).toBe('cancelled');
  });

  it('the statements read indexes, not the tables: live executions and the fires by execution; the last runs of a queue by key and time', async () => {
    /** Runs what the repository sends under EXPLAIN (the plan for its values, and the generic one it is prepared with), collecting the plans' text. */
    const plans: string[] = [];
    // EXPLAIN (GENERIC_PLAN) is PostgreSQL 16's; on 15 (CI's second run) the plan for the values only.
    const { rows: [{ server_version_num: version }] } = await a.deps.db.query<{ server_version_num: string }>('SHOW server_version_num');
    const explains = Number(version) >= 160000 ? ['EXPLAIN', 'EXPLAIN (GENERIC_PLAN)'] : ['EXPLAIN'];
    const explaining = {
      async query(config: { text: string; values: unknown[] }) {
        for (const explain of explains) {
          const r = await a.deps.db.query<{ 'QUERY PLAN': string }>(`${explain} ${config.text}`, explain === 'EXPLAIN' ? config.values : []);
          plans.push(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
        }
        return { rows: [] };
      },
    } as unknown as Queryable;
    // Many finished runs of one trigger, a few live ones: as after months of a schedule.
    await register('overlap/seeded', `cron: "@yearly"`);
    const { rows } = await a.deps.db.query<{ catalog_id: number }>(`SELECT catalog_id FROM core.catalog WHERE path = 'overlap/seeded'`);
    await a.deps.db.query(
      `WITH ids AS (SELECT nextval('core.execution_id_seq') AS id, g FROM generate_series(1, 5000) g),
            x AS (INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, started_at, finished_at)
                  SELECT id, $1, 'overlap/seeded', id, CASE WHEN g % 1000 = 0 THEN 'running' ELSE 'completed' END, t, CASE WHEN g % 1000 = 0 THEN NULL ELSE t END
                    FROM ids, LATERAL (SELECT now() - make_interval(secs => 5000 - g) AS t) s RETURNING execution_id, started_at)
       INSERT INTO core.trigger_fire (path, name, fire_key, outcome, execution_id, scheduled_time, fired_at)
       SELECT 'overlap/seeded', 't', to_char(x.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'started', x.execution_id, x.started_at, x.started_at FROM x`,
      [rows[0]!.catalog_id],
    );
    await a.deps.db.query('ANALYZE core.execution');
    await a.deps.db.query('ANALYZE core.trigger_fire');
    const seeded = [{ path: 'overlap/seeded', name: 't' }];
    expect((await unfinishedRuns(a.deps.db, seeded, 5)).get('overlap/seeded\nt')).toHaveLength(5);
    await unfinishedRuns(explaining, seeded, 5);
    for (const plan of plans.splice(0)) {
      expect(plan, plan).toMatch(/Index Scan using execution_live_idx on execution/);
      expect(plan, plan).toMatch(/Index Scan using trigger_fire_execution_idx on trigger_fire/);
      expect(plan, plan).not.toMatch(/Seq Scan/);
    }
    // The last run before a time, and the runs fired since it.
    const before = new Date(Date.now() - 100_000);
    expect((await queuedThrough(a.deps.db, [{ ...seeded[0]!, before }])).get('overlap/seeded\nt')!.getTime()).toBeGreaterThan(before.getTime());
    await queuedThrough(explaining, [{ ...seeded[0]!, before }]);
    for (const plan of plans.splice(0)) {
      expect(plan, plan).toMatch(/Index Scan Backward using trigger_fire_pkey on trigger_fire/);
      expect(plan, plan).toMatch(/Index Scan using trigger_fire_recent_idx|Bitmap Index Scan on trigger_fire_recent_idx/);
      expect(plan, plan).toMatch(/Index Scan using execution_pkey on execution e\s+.*\n\s+Index Cond: \(execution_id = f\.execution_id\)/);
      expect(plan, plan).not.toMatch(/Seq Scan|Hash Join/);
    }
  });
});

describe('catch-up with overlap skip', () => {
  it('catch_up all: after a downtime the on-time fire starts; the caught-up times are recorded as skipped', async () => {
    const path = 'overlap/skip_all';
    await register(path, `cron: "* * * * *", overlap: skip, catch_up: all, max_catch_up: 3`);
    await setNextFire(path, new Date('2031-05-01T16:48:00Z'));
    const report = await tick(new Date('2031-05-01T16:51:00.010Z'));
    expect(report).toMatchObject({ started: 1, skipped: 3 });
    expect((await fires(path)).map((f) => [f.fire_key, f.outcome])).toEqual([
      ['2031-05-01T16:48:00.000Z', 'skipped'],
      ['2031-05-01T16:49:00.000Z', 'skipped'],
      ['2031-05-01T16:50:00.000Z', 'skipped'],
      ['2031-05-01T16:51:00.000Z', 'started'],
    ]);
    expect(await nextFire(path)).toBe('2031-05-01T16:52:00.000Z');
  });
});

describe('overlap queue', () => {
  it('a due time waiting longer than the misfire grace for a run starts when the run ends: nothing dropped, in order', async () => {
    const path = 'overlap/queue_slow';
    // Runs slower than the cron: six more due times wait after each run (a bound of 20 holds three runs).
    await register(path, `cron: "*/10 * * * * *", overlap: queue, max_catch_up: 20`);
    const t0 = anHourAgo();
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    // Each run lasts 70 s: seven due times fall while it runs, one of them more than 60 s before it ends.
    let at = t0;
    for (let run = 0; run < 3; run++) {
      for (let s = 10; s <= 70; s += 10) {
        const report = await tick(plus(at, s * 1000 + 10));
        expect(report.started).toBe(0);
        expect(report.waiting.map((w) => w.path)).toEqual([path]);
      }
      at = plus(at, 70_000);
      await cancel((await runningOne(path)).execution_id);
      const report = await tick(plus(at, 20));
      expect(report.started).toBe(1);
    }
    // Started one after another, oldest first: t0, t0+10 s, t0+20 s, t0+30 s; none skipped.
    expect((await fires(path)).map((f) => [f.fire_key, f.outcome])).toEqual([0, 10, 20, 30].map((s) => [iso(plus(t0, s * 1000)), 'started']));
    expect(await nextFire(path)).toBe(iso(plus(t0, 40_000)));
    expect(await listed(path)).toMatchObject({ fires: 4, skipped: 0, errors: 0 });
  });

  it('at most max_catch_up due times wait: when the run ends, the older ones are recorded as skipped and counted', async () => {
    const path = 'overlap/queue_bound';
    await register(path, `cron: "*/10 * * * * *", overlap: queue, max_catch_up: 3`);
    const t0 = anHourAgo();
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    // Seven due times fall while the run runs: they wait, nothing is written meanwhile.
    for (let s = 10; s <= 70; s += 10) await tick(plus(t0, s * 1000 + 10));
    expect((await fires(path)).map((f) => f.fire_key)).toEqual([iso(t0)]);
    expect(await nextFire(path)).toBe(iso(plus(t0, 10_000)));
    // It ends: the four oldest are dropped, recorded; the oldest of the three newest starts.
    await cancel((await runningOne(path)).execution_id);
    expect(await tick(plus(t0, 70_020))).toMatchObject({ started: 1, skipped: 4 });
    const ended = await fires(path);
    expect(ended.map((f) => [f.fire_key, f.outcome])).toEqual([
      [iso(t0), 'started'],
      ...[10, 20, 30, 40].map((s) => [iso(plus(t0, s * 1000)), 'skipped']),
      [iso(plus(t0, 50_000)), 'started'],
    ]);
    expect(ended[1]!.error).toBe('overlap queue: more than 3 due times waiting (max_catch_up)');
    expect(await listed(path)).toMatchObject({ fires: 2, skipped: 4 });
    // The other two start one after another.
    for (const s of [60, 70]) {
      await cancel((await runningOne(path)).execution_id);
      await tick(plus(t0, 70_020 + s));
      expect((await runningOne(path)).fire_key).toBe(iso(plus(t0, s * 1000)));
    }
    expect(await listed(path)).toMatchObject({ fires: 4, skipped: 4 });
    expect(await nextFire(path)).toBe(iso(plus(t0, 80_000)));
  });

  it('a pause records the due times waiting for a run as skipped, once: the run ends and a resume starts none of them', async () => {
    const path = 'overlap/queue_pause';
    await register(path, `cron: "*/10 * * * * *", overlap: queue, max_catch_up: 3`);
    const t0 = anHourAgo();
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    const run = (await runningOne(path)).execution_id;
    for (let s = 10; s <= 50; s += 10) await tick(plus(t0, s * 1000 + 10));
    // Five wait: the three newest for the pause, the two older as the queue's bound drops them.
    expect(await pauseTrigger(a.deps, path, 't', true, plus(t0, 50_020))).toMatchObject({ state: 'paused', skipped: 5, fires: 1 });
    const held = await fires(path);
    expect(held.map((f) => [f.fire_key, f.outcome, f.error])).toEqual([
      [iso(t0), 'started', null],
      ...[10, 20].map((s) => [iso(plus(t0, s * 1000)), 'skipped', 'overlap queue: more than 3 due times waiting (max_catch_up)']),
      ...[30, 40, 50].map((s) => [iso(plus(t0, s * 1000)), 'skipped', `trigger paused while this time waited its turn (execution ${run} still running)`]),
    ]);
    // Paused again later: the times that fell while paused are not recorded.
    expect(await pauseTrigger(a.deps, path, 't', true, plus(t0, 90_020))).toMatchObject({ skipped: 5 });
    await cancel(run);
    await pauseTrigger(a.deps, path, 't', false, plus(t0, 100_010));
    expect(await nextFire(path)).toBe(iso(plus(t0, 110_000)));
    expect((await tick(plus(t0, 100_020))).started).toBe(0);
    expect(await tick(plus(t0, 110_010))).toMatchObject({ started: 1, skipped: 0 });
    expect((await runningOne(path)).fire_key).toBe(iso(plus(t0, 110_000)));
    expect((await fires(path)).length).toBe(7);
  });

  it('the pause route records what a queue schedule held; a time a backfill fired stays as it was', async () => {
    const path = 'overlap/queue_pause_route';
    await register(path, `cron: "0 0 * * *", overlap: queue`);
    // Midnight (UTC) two days ago starts a run that is still running: yesterday's and today's midnights wait for it.
    const day = 86_400_000;
    const t0 = new Date(Math.floor(Date.now() / day) * day - 2 * day);
    await setNextFire(path, t0);
    await tick(plus(t0, 10));
    const run = (await runningOne(path)).execution_id;
    await tick(plus(t0, day + 10));
    expect(await nextFire(path)).toBe(iso(plus(t0, day)));
    const backfill = await http(a.url, 'POST', `/api/triggers/${path}/t/backfill`, { from: iso(plus(t0, day)), to: iso(plus(t0, day + 1)) });
    expect(backfill.status, JSON.stringify(backfill.body)).toBe(200);
    const res = await http(a.url, 'POST', `/api/triggers/${path}/t/pause`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ state: 'paused', next_fires: [], skipped: 1, fires: 2 });
    expect((await fires(path)).map((f) => [f.fire_key, f.outcome, f.error])).toEqual([
      [iso(t0), 'started', null],
      [iso(plus(t0, day)), 'started', null],
      // The backfill's run is a run of the trigger too: today's midnight waited for both.
      [iso(plus(t0, 2 * day)), 'skipped', `trigger paused while this time waited its turn (execution ${run}, ${backfill.body.execution_ids[0]} still running)`],
    ]);
    const resumed = await http(a.url, 'POST', `/api/triggers/${path}/t/resume`, {});
    expect(resumed.body).toMatchObject({ state: 'active', next_fires: [iso(plus(t0, 3 * day)), iso(plus(t0, 4 * day)), iso(plus(t0, 5 * day))] });
  });

  it('after a downtime with no run unfinished, catch-up decides about the missed times; the on-time ones wait their turn', async () => {
    const path = 'overlap/queue_down';
    await register(path, `cron: "*/10 * * * * *", overlap: queue, catch_up: none`);
    // Times after now: the run below ends (now) before every one of them.
    const t1 = new Date(Math.ceil((Date.now() + 86_400_000) / 10_000) * 10_000);
    await setNextFire(path, t1);
    await tick(plus(t1, 10));
    await cancel((await runningOne(path)).execution_id);
    // Ten minutes down: the times older than 60 s were missed, not waiting for a run.
    const back = plus(t1, 600_010);
    expect((await tick(back)).started).toBe(1);
    expect((await runningOne(path)).fire_key).toBe(iso(plus(t1, 550_000)));
    expect(await nextFire(path)).toBe(iso(plus(t1, 560_000)));
    expect(await listed(path)).toMatchObject({ fires: 2, skipped: 0 });
  });
});
