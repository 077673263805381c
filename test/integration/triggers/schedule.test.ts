// Schedules on a real PostgreSQL, ticked by hand with an injected clock (the app starts no
// timekeeper of its own here): exactly once per scheduled time, catch-up and overlap policies,
// daylight saving, backfill, pause and resume, and the API that shows them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

/** Registers a playbook whose one step waits forever (no worker runs here: executions stay running). */
async function register(path: string, trigger: string): Promise<void> {
  const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: sched, path: ${path} }
workload: { day: none }
triggers:
${trigger}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

/** Puts a schedule's next fire at `at` (as if registered then): the clock of these tests is injected. */
async function setNextFire(path: string, name: string, at: string): Promise<void> {
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $3 WHERE path = $1 AND name = $2`, [path, name, at]);
}

async function fires(path: string): Promise<{ fire_key: string; outcome: string; execution_id: string | null }[]> {
  const { rows } = await a.deps.db.query<{ fire_key: string; outcome: string; execution_id: string | null }>(
    `SELECT fire_key, outcome, execution_id FROM core.trigger_fire WHERE path = $1 ORDER BY fire_key`,
    [path],
  );
  return rows;
}

async function executionsOf(path: string): Promise<{ execution_id: string; status: string; workload: Json }[]> {
  const { rows } = await a.deps.db.query<{ execution_id: string; status: string; workload: Json }>(
    `SELECT x.execution_id, x.status, e.context->'input'->'workload' AS workload FROM core.execution x
       JOIN core.event e ON e.execution_id = x.execution_id AND e.event_type = 'execution.started'
      WHERE x.path = $1 ORDER BY x.execution_id`,
    [path],
  );
  return rows;
}

const clock = (iso: string) => () => new Date(iso);

describe('schedules', () => {
  it('fires each scheduled time once with its payload and the trigger in execution.started, however often and from however many servers it is ticked', async () => {
    await register('sched/once', `  - { name: every_minute, kind: schedule, cron: "* * * * *", overlap: allow, payload: { day: "{{ trigger.scheduled_time[:10] }}" } }`);
    await setNextFire('sched/once', 'every_minute', '2030-01-01T00:00:00Z');
    const b = await startSecondServer(a);
    try {
      const now = clock('2030-01-01T00:00:00.100Z');
      // Two servers tick at the same moment, twice each: one fire.
      await Promise.all([runScheduleTick(a.deps, now), runScheduleTick(b.deps, now), runScheduleTick(a.deps, now), runScheduleTick(b.deps, now)]);
      expect(await fires('sched/once')).toMatchObject([{ fire_key: '2030-01-01T00:00:00.000Z', outcome: 'started' }]);
      const [run] = await executionsOf('sched/once');
      const { rows } = await a.deps.db.query(`SELECT context FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`, [run.execution_id]);
      expect(rows[0].context.trigger).toEqual({ name: 'every_minute', kind: 'schedule', fire_key: '2030-01-01T00:00:00.000Z' });
      expect(run.workload).toEqual({ day: '2030-01-01' });
      // The next minute fires once more; ticking between fires nothing.
      await runScheduleTick(b.deps, clock('2030-01-01T00:00:30Z'));
      await Promise.all([runScheduleTick(a.deps, clock('2030-01-01T00:01:00.050Z')), runScheduleTick(b.deps, clock('2030-01-01T00:01:00.050Z'))]);
      expect((await fires('sched/once')).map((f) => f.fire_key)).toEqual(['2030-01-01T00:00:00.000Z', '2030-01-01T00:01:00.000Z']);
      expect(await executionsOf('sched/once')).toHaveLength(2);
    } finally {
      await b.close();
    }
  });

  it('overlap skip: while the previous run still runs, a due time is skipped (recorded, never tried again)', async () => {
    await register('sched/skip', `  - { name: slow, kind: schedule, cron: "* * * * *", overlap: skip }`);
    await setNextFire('sched/skip', 'slow', '2030-02-01T00:00:00Z');
    await runScheduleTick(a.deps, clock('2030-02-01T00:00:00.010Z'));
    await runScheduleTick(a.deps, clock('2030-02-01T00:01:00.010Z'));
    await runScheduleTick(a.deps, clock('2030-02-01T00:01:00.020Z'));
    expect(await fires('sched/skip')).toMatchObject([
      { fire_key: '2030-02-01T00:00:00.000Z', outcome: 'started' },
      { fire_key: '2030-02-01T00:01:00.000Z', outcome: 'skipped', execution_id: null },
    ]);
    expect(await executionsOf('sched/skip')).toHaveLength(1);
    const list = (await http(a.url, 'GET', '/api/triggers?kind=schedule')).body.triggers.find((t: Json) => t.path === 'sched/skip');
    expect(list).toMatchObject({ name: 'slow', kind: 'schedule', state: 'active', fires: 1, skipped: 1, errors: 0, next_fires: ['2030-02-01T00:02:00.000Z', '2030-02-01T00:03:00.000Z', '2030-02-01T00:04:00.000Z'] });
    expect(list.last_fire).toMatchObject({ fire_key: '2030-02-01T00:01:00.000Z', outcome: 'skipped' });
  });

  it('overlap allow starts beside a running one; queue waits for it; cancel_previous cancels it', async () => {
    await register('sched/allow', `  - { name: t, kind: schedule, cron: "* * * * *", overlap: allow }`);
    await setNextFire('sched/allow', 't', '2030-03-01T00:00:00Z');
    await runScheduleTick(a.deps, clock('2030-03-01T00:00:00.010Z'));
    await runScheduleTick(a.deps, clock('2030-03-01T00:01:00.010Z'));
    expect((await executionsOf('sched/allow')).map((e) => e.status)).toEqual(['running', 'running']);

    await register('sched/queue', `  - { name: t, kind: schedule, cron: "* * * * *", overlap: queue }`);
    await setNextFire('sched/queue', 't', '2030-03-01T00:00:00Z');
    await runScheduleTick(a.deps, clock('2030-03-01T00:00:00.010Z'));
    await runScheduleTick(a.deps, clock('2030-03-01T00:01:00.010Z'));
    expect(await executionsOf('sched/queue')).toHaveLength(1);
    const [first] = await executionsOf('sched/queue');
    expect((await http(a.url, 'POST', `/api/executions/${first.execution_id}/cancel`, {})).status).toBeLessThan(300);
    await runScheduleTick(a.deps, clock('2030-03-01T00:01:00.020Z'));
    expect((await fires('sched/queue')).map((f) => [f.fire_key, f.outcome])).toEqual([
      ['2030-03-01T00:00:00.000Z', 'started'],
      ['2030-03-01T00:01:00.000Z', 'started'],
    ]);

    await register('sched/cancel', `  - { name: t, kind: schedule, cron: "* * * * *", overlap: cancel_previous }`);
    await setNextFire('sched/cancel', 't', '2030-03-01T00:00:00Z');
    await runScheduleTick(a.deps, clock('2030-03-01T00:00:00.010Z'));
    await runScheduleTick(a.deps, clock('2030-03-01T00:01:00.010Z'));
    expect((await executionsOf('sched/cancel')).map((e) => e.status)).toEqual(['cancelled', 'running']);
  });

  it('cancel_previous: a server whose tick read the schedule before another server fired it cancels nothing of that fire', async () => {
    await register('sched/cancel_race', `  - { name: t, kind: schedule, cron: "* * * * *", overlap: cancel_previous }`);
    await setNextFire('sched/cancel_race', 't', '2030-03-02T00:00:00Z');
    await runScheduleTick(a.deps, clock('2030-03-02T00:00:00.010Z'));
    // Server "late" reads the schedule due at 00:01; server a fires 00:01 (cancelling the first run)
    // before late reads the trigger's unfinished runs: late then sees a's new run as one to cancel.
    const at = clock('2030-03-02T00:01:00.010Z');
    let overtaken = false;
    const db = new Proxy(a.deps.db, {
      get(target, prop) {
        if (prop === 'query') {
          return async (...args: Parameters<typeof target.query>) => {
            const result = await target.query(...args);
            const name = typeof args[0] === 'object' && args[0] !== null && 'name' in args[0] ? args[0].name : undefined;
            if (name === 'svc_look_at_schedules' && !overtaken) {
              overtaken = true;
              await runScheduleTick(a.deps, at);
            }
            return result;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const late = await runScheduleTick({ ...a.deps, db }, at);
    expect(overtaken).toBe(true);
    expect(late.raced).toBeGreaterThanOrEqual(1);
    expect((await executionsOf('sched/cancel_race')).map((e) => e.status)).toEqual(['cancelled', 'running']);
  });

  it('catch-up after downtime: none fires nothing missed, latest the newest missed, all the newest max_catch_up', async () => {
    const down = '2030-04-01T00:00:00Z';
    const back = clock('2030-04-01T00:32:30Z'); // 30 minutes of fires missed, none within the grace
    for (const [policy, extra] of [['none', ''], ['latest', ''], ['all', ', max_catch_up: 5']]) {
      const path = `sched/catch_${policy}`;
      await register(path, `  - { name: t, kind: schedule, cron: "*/5 * * * *", overlap: allow, catch_up: ${policy}${extra} }`);
      await setNextFire(path, 't', down);
      await runScheduleTick(a.deps, back);
    }
    expect(await fires('sched/catch_none')).toEqual([]);
    expect((await fires('sched/catch_latest')).map((f) => f.fire_key)).toEqual(['2030-04-01T00:30:00.000Z']);
    // A time within the grace (a late tick, not downtime) fires under every policy.
    await setNextFire('sched/catch_none', 't', '2030-04-01T00:30:00Z');
    await runScheduleTick(a.deps, clock('2030-04-01T00:30:20Z'));
    expect((await fires('sched/catch_none')).map((f) => f.fire_key)).toEqual(['2030-04-01T00:30:00.000Z']);
    await a.deps.db.query(`DELETE FROM core.trigger_fire WHERE path = 'sched/catch_none'`);
    expect((await fires('sched/catch_all')).map((f) => f.fire_key)).toEqual(['10', '15', '20', '25', '30'].map((m) => `2030-04-01T00:${m}:00.000Z`));
    // Each moved on past the downtime: the next tick at 00:35 fires 00:35 only.
    await runScheduleTick(a.deps, clock('2030-04-01T00:35:00.010Z'));
    expect((await fires('sched/catch_none')).map((f) => f.fire_key)).toEqual(['2030-04-01T00:35:00.000Z']);
    expect(await fires('sched/catch_all')).toHaveLength(6);
  });

  it('daylight saving: a skipped local time fires once at the next valid time, a repeated one once', async () => {
    await register('sched/dst', `  - { name: t, kind: schedule, cron: "30 2 * * *", timezone: Europe/Berlin, overlap: allow }`);
    // Spring forward 2030-03-31: 02:00 CET becomes 03:00 CEST; 02:30 does not exist.
    await setNextFire('sched/dst', 't', '2030-03-30T01:30:00Z');
    for (const at of ['2030-03-30T01:30:00.010Z', '2030-03-31T01:00:00.010Z', '2030-03-31T01:30:00.010Z', '2030-04-01T00:30:00.010Z']) await runScheduleTick(a.deps, clock(at));
    expect((await fires('sched/dst')).map((f) => f.fire_key)).toEqual(['2030-03-30T01:30:00.000Z', '2030-03-31T01:00:00.000Z', '2030-04-01T00:30:00.000Z']);
    // Fall back 2030-10-27: 03:00 CEST becomes 02:00 CET; 02:30 happens twice, fires once.
    await setNextFire('sched/dst', 't', '2030-10-27T00:30:00Z');
    for (const at of ['2030-10-27T00:30:00.010Z', '2030-10-27T01:30:00.010Z', '2030-10-28T01:30:00.010Z']) await runScheduleTick(a.deps, clock(at));
    expect((await fires('sched/dst')).map((f) => f.fire_key).slice(3)).toEqual(['2030-10-27T00:30:00.000Z', '2030-10-28T01:30:00.000Z']);
  });

  it('backfill starts each time of [from, to) once; the same range again starts nothing', async () => {
    await register('sched/backfill', `  - { name: hourly, kind: schedule, cron: "@hourly", payload: { day: "{{ trigger.scheduled_time }}" } }`);
    const range = { from: '2020-01-01T00:00:00Z', to: '2020-01-01T05:00:00Z' };
    const first = await http(a.url, 'POST', '/api/triggers/sched/backfill/hourly/backfill', range);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.execution_ids).toHaveLength(5);
    expect(first.body.skipped).toBe(0);
    const [again, overlapping] = await Promise.all([
      http(a.url, 'POST', '/api/triggers/sched/backfill/hourly/backfill', range),
      http(a.url, 'POST', '/api/triggers/sched/backfill/hourly/backfill', { from: '2020-01-01T03:00:00Z', to: '2020-01-01T07:00:00Z' }),
    ]);
    expect(again.body).toEqual({ execution_ids: [], skipped: 5, refused: [] });
    expect(overlapping.body.execution_ids).toHaveLength(2);
    expect(await executionsOf('sched/backfill')).toHaveLength(7);
    const workloads = (await executionsOf('sched/backfill')).map((e) => (e.workload as { day: string }).day).sort();
    expect(workloads[0]).toBe('2020-01-01T00:00:00.000Z');
    const tooMany = await http(a.url, 'POST', '/api/triggers/sched/backfill/hourly/backfill', { from: '2000-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' });
    expect(tooMany.status).toBe(422);
    expect(JSON.stringify(tooMany.body)).toContain('1000');
    expect((await http(a.url, 'POST', '/api/triggers/sched/backfill/hourly/backfill', { from: 'yesterday', to: range.to })).status).toBe(422);
    expect((await http(a.url, 'POST', '/api/triggers/sched/backfill/nope/backfill', range)).status).toBe(404);
  });

  it('pause stops a schedule until resume; resume does not catch up what was due while paused', async () => {
    await register('sched/pause', `  - { name: t, kind: schedule, cron: "* * * * *", overlap: allow }`);
    const byHand = await http(a.url, 'POST', '/api/triggers/sched/pause/t/fire', { fire_key: 'before-pause' });
    const lastFire = { fire_key: 'before-pause', execution_id: byHand.body.execution_id, outcome: 'started' };
    const paused = await http(a.url, 'POST', '/api/triggers/sched/pause/t/pause', {});
    // The trigger as the listing shows it, last fire and all (svc triggers pause --json prints it).
    expect(paused.body).toMatchObject({ state: 'paused', next_fires: [], fires: 1, last_fire: lastFire });
    await setNextFire('sched/pause', 't', '2000-01-01T00:00:00Z');
    await runScheduleTick(a.deps, clock('2000-01-01T00:05:00Z'));
    expect((await fires('sched/pause')).map((f) => f.fire_key)).toEqual(['before-pause']);
    // A field it does not take is refused, not dropped: `{"paused": true}` to resume stays paused.
    const misread = await http(a.url, 'POST', '/api/triggers/sched/pause/t/resume', { paused: true });
    expect(misread.status).toBe(422);
    expect(misread.body.detail.errors).toEqual([expect.stringMatching(/^paused: /)]);
    expect((await http(a.url, 'GET', '/api/triggers?kind=schedule')).body.triggers.find((t: { path: string }) => t.path === 'sched/pause').state).toBe('paused');
    const resumed = await http(a.url, 'POST', '/api/triggers/sched/pause/t/resume', {});
    expect(resumed.body).toMatchObject({ state: 'active', last_fire: lastFire });
    expect(new Date(resumed.body.next_fires[0]).getTime()).toBeGreaterThan(Date.now());
  });

  it('a schedule paused after a tick looked at it but before the tick took it does not fire', async () => {
    await register('sched/pause_race', `  - { name: t, kind: schedule, cron: "* * * * *", overlap: allow }`);
    await setNextFire('sched/pause_race', 't', '2030-04-01T00:00:00Z');
    let paused = false;
    const db = new Proxy(a.deps.db, {
      get(target, prop) {
        if (prop === 'query') {
          return async (...args: Parameters<typeof target.query>) => {
            const result = await target.query(...args);
            const name = typeof args[0] === 'object' && args[0] !== null && 'name' in args[0] ? args[0].name : undefined;
            if (name === 'svc_look_at_schedules' && !paused) {
              paused = true;
              expect((await http(a.url, 'POST', '/api/triggers/sched/pause_race/t/pause', {})).body.state).toBe('paused');
            }
            return result;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await runScheduleTick({ ...a.deps, db }, clock('2030-04-01T00:00:00.010Z'));
    expect(paused).toBe(true);
    expect(await fires('sched/pause_race')).toEqual([]);
    expect(await executionsOf('sched/pause_race')).toEqual([]);
  });

  it('fire by hand starts one execution; a fire_key again answers the first one', async () => {
    await register('sched/manual', `  - { name: t, kind: schedule, cron: "@daily", payload: { day: "{{ trigger.scheduled_time.split('T')[0] }}" } }`);
    const one = await http(a.url, 'POST', '/api/triggers/sched/manual/t/fire', { fire_key: 'k1', payload: { extra: 1 } });
    expect(one.status).toBe(202);
    expect(one.body).toMatchObject({ duplicate: false, fire_key: 'k1', outcome: 'started' });
    const two = await http(a.url, 'POST', '/api/triggers/sched/manual/t/fire', { fire_key: 'k1' });
    expect(two.body).toMatchObject({ duplicate: true, execution_id: one.body.execution_id });
    const [run] = await executionsOf('sched/manual');
    expect(run.workload).toMatchObject({ extra: 1, day: new Date().toISOString().slice(0, 10) });
  });

  it('a fire by hand keyed by a scheduled time still to come is 422 naming fire_key: the schedule would start nothing at that time', async () => {
    await register('sched/manual_future', `  - { name: t, kind: schedule, cron: "@daily" }`);
    const [listed] = ((await http(a.url, 'GET', '/api/triggers?kind=schedule')).body.triggers as { path: string; next_fires: string[] }[]).filter((t) => t.path === 'sched/manual_future');
    const future = await http(a.url, 'POST', '/api/triggers/sched/manual_future/t/fire', { fire_key: listed.next_fires[0] });
    expect(future.status, JSON.stringify(future.body)).toBe(422);
    expect(JSON.stringify(future.body)).toContain('fire_key: ');
    expect(await fires('sched/manual_future')).toEqual([]);
    // A past time (a day run again by hand) and any other text are keys of one's own.
    const past = await http(a.url, 'POST', '/api/triggers/sched/manual_future/t/fire', { fire_key: '2026-01-01T00:00:00.000Z' });
    expect(past.status).toBe(202);
    const text = await http(a.url, 'POST', '/api/triggers/sched/manual_future/t/fire', { fire_key: `rerun-${listed.next_fires[0]}` });
    expect(text.status).toBe(202);
  });

  it('registration checks the block: a bad cron, an unknown timezone, a credential that is no name, a template root that is not there', async () => {
    const bad = `apiVersion: svc/v1
metadata: { name: bad, path: sched/bad }
triggers:
  - { name: a, kind: schedule, cron: "61 * * * *" }
  - { name: b, kind: schedule, cron: "* * * * *", timezone: Mars/Olympus }
  - { name: c, kind: webhook, auth: "{{ workload.secret }}" }
  - { name: d, kind: schedule, cron: "@daily", payload: { x: "{{ workload.y }}" } }
  - { name: a, kind: schedule, cron: "* * * *" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
    const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: bad });
    expect(res.status).toBe(400);
    const problems = (res.body.problems ?? res.body.detail?.problems) as { path: string }[];
    expect(problems.map((p) => p.path).sort()).toEqual(['triggers[0].cron', 'triggers[1].timezone', 'triggers[2].auth', 'triggers[3].payload.x', 'triggers[4].cron', 'triggers[4].name'].sort());
    expect((await http(a.url, 'GET', '/api/triggers')).body.triggers.some((t: Json) => t.path === 'sched/bad')).toBe(false);
  });

  it('a new version replaces the triggers; one without them stops them', async () => {
    await register('sched/versioned', `  - { name: one, kind: schedule, cron: "@daily" }\n  - { name: two, kind: schedule, cron: "@hourly" }`);
    await register('sched/versioned', `  - { name: two, kind: schedule, cron: "@weekly" }`);
    let mine = (await http(a.url, 'GET', '/api/triggers')).body.triggers.filter((t: Json) => t.path === 'sched/versioned');
    expect(mine.map((t: Json) => [t.name, t.spec.cron])).toEqual([['two', '@weekly']]);
    const plain = `apiVersion: svc/v1\nmetadata: { name: sched, path: sched/versioned }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n`;
    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: plain })).status).toBe(201);
    mine = (await http(a.url, 'GET', '/api/triggers')).body.triggers.filter((t: Json) => t.path === 'sched/versioned');
    expect(mine).toEqual([]);
  });

  it('a newer version that is an MCP server document leaves the path no triggers', async () => {
    await register('sched/to_mcp', `  - { name: nightly, kind: schedule, cron: "@daily" }`);
    const mcp = await http(a.url, 'POST', '/api/catalog/register', { resource_type: 'mcp', content: 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: to_mcp, path: sched/to_mcp }\nendpoint: http://127.0.0.1:1/mcp\n' });
    expect(mcp.status, JSON.stringify(mcp.body)).toBe(201);
    expect((await http(a.url, 'GET', '/api/triggers')).body.triggers.filter((t: Json) => t.path === 'sched/to_mcp')).toEqual([]);
    expect((await http(a.url, 'POST', '/api/triggers/sched/to_mcp/nightly/fire', {})).status).toBe(404);
    expect(await fires('sched/to_mcp')).toEqual([]);
  });
});

describe('a fire key twice in one request', () => {
  it('is made once; the repeat answers as its duplicate', async () => {
    await register('sched/twice', `  - { name: t, kind: schedule, cron: "@daily" }`);
    const { fireTrigger } = await import('../../../src/triggers/fire-trigger.ts');
    const fire = { fireKey: 'same', scheduledTime: null, payload: {} };
    const results = await fireTrigger(a.deps, { path: 'sched/twice', name: 't', kind: 'schedule' }, [fire, fire]);
    expect(results.map((r) => [r.outcome, r.duplicate])).toEqual([
      ['started', false],
      ['started', true],
    ]);
    expect(results[1].executionId).toBe(results[0].executionId);
    expect(await executionsOf('sched/twice')).toHaveLength(1);
  });
});
