// Found by the documentation audit (helper): docs/triggers.md said a fire while a debounce window
// is open "joins the window's execution" with no exception, and the overlap table said a due time
// is skipped while the trigger's previous run is unfinished. For a schedule both apply, and the
// server lets overlap decide (the window's queued execution is that previous run): under the
// default `skip` a due time in the window is skipped and the window runs with the first fire's
// payload. The doc now says so; this pins each policy on a real server (ticks with an injected
// clock, as schedule.test.ts does; no worker, so executions stay as they are).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

async function register(path: string, overlap: string, inputs = ''): Promise<void> {
  const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: debounced, path: ${path} }
workload: { t: none }
${inputs}
debounce: { seconds: 300 }
triggers:
  - { name: t, kind: schedule, cron: "* * * * *", overlap: ${overlap}, payload: { t: "{{ trigger.scheduled_time }}" } }
workflow:
  - step: start
    tool: { name: n, kind: noop }
`;
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = '2030-05-01T00:00:00Z' WHERE path = $1`, [path]);
}

type Fire = { fire_key: string; outcome: string; execution_id: string | null };
async function fires(path: string): Promise<Fire[]> {
  const { rows } = await a.deps.db.query<Fire>(`SELECT fire_key, outcome, execution_id FROM core.trigger_fire WHERE path = $1 ORDER BY fire_key`, [path]);
  return rows;
}

async function executions(path: string): Promise<{ execution_id: string; status: string; args: { t?: string } | null }[]> {
  const { rows } = await a.deps.db.query<{ execution_id: string; status: string; args: { t?: string } | null }>(
    `SELECT x.execution_id, x.status, m.args FROM core.execution x LEFT JOIN core.admission m USING (execution_id)
      WHERE x.path = $1 ORDER BY x.execution_id`,
    [path],
  );
  return rows;
}

/** Two due times a minute apart, both inside the first one's 300 s window. */
async function twoTicks(): Promise<void> {
  await runScheduleTick(a.deps, () => new Date('2030-05-01T00:00:00.010Z'));
  await runScheduleTick(a.deps, () => new Date('2030-05-01T00:01:00.010Z'));
}

describe('a schedule on a debounced playbook: overlap decides a due time inside the window', () => {
  it('skip (the default): the second due time is skipped; the window keeps the first fire and its payload', async () => {
    await register('debounce/skip', 'skip');
    await twoTicks();
    const [first, second] = await fires('debounce/skip');
    expect(first).toMatchObject({ fire_key: '2030-05-01T00:00:00.000Z', outcome: 'started' });
    expect(second).toMatchObject({ fire_key: '2030-05-01T00:01:00.000Z', outcome: 'skipped', execution_id: null });
    const runs = await executions('debounce/skip');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'queued', args: null });
  });

  it('allow: the second due time joins the window (one execution, the later payload)', async () => {
    await register('debounce/allow', 'allow');
    await twoTicks();
    const rows = await fires('debounce/allow');
    expect(rows.map((f) => f.outcome)).toEqual(['started', 'started']);
    expect(rows[0].execution_id).toBe(rows[1].execution_id);
    const runs = await executions('debounce/allow');
    expect(runs).toHaveLength(1);
    expect(runs[0].args?.t).toBe('2030-05-01T00:01:00.000Z');
  });

  it('queue: the second due time waits for the window\'s execution; cancel_previous cancels it and opens its own', async () => {
    await register('debounce/queue', 'queue');
    await twoTicks();
    expect((await fires('debounce/queue')).map((f) => f.fire_key)).toEqual(['2030-05-01T00:00:00.000Z']);
    expect(await executions('debounce/queue')).toHaveLength(1);

    await register('debounce/cancel', 'cancel_previous');
    await twoTicks();
    const rows = await fires('debounce/cancel');
    expect(rows.map((f) => f.outcome)).toEqual(['started', 'started']);
    expect(rows[0].execution_id).not.toBe(rows[1].execution_id);
    expect((await executions('debounce/cancel')).map((e) => e.status)).toEqual(['cancelled', 'queued']);
  });

  it('cancel_previous whose start is refused cancels nothing and leaves the window open to joins', async () => {
    await register('debounce/cancel-refused', 'cancel_previous', 'inputs: { t: { type: string, enum: ["2030-05-01T00:00:00.000Z", "by hand", "none"] } }');
    await twoTicks();
    const rows = await fires('debounce/cancel-refused');
    expect(rows.map((f) => f.outcome)).toEqual(['started', 'refused']);
    const byHand = await http(a.url, 'POST', '/api/triggers/debounce/cancel-refused/t/fire', { payload: { t: 'by hand' } });
    expect(byHand.status, JSON.stringify(byHand.body)).toBe(202);
    expect(byHand.body).toMatchObject({ execution_id: Number(rows[0].execution_id), debounced: true });
    const runs = await executions('debounce/cancel-refused');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'queued', args: { t: 'by hand' } });
  });
});
