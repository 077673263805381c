// An `overlap: queue` schedule's due times waiting for its run vanished when a new version of the
// playbook changed its cron or removed it: nothing recorded them (the listing's skipped stayed 0,
// no fire row said what became of them), though a pause records them as skipped and says why
// (docs/triggers.md, "Pause and resume"). A version that ends the schedule they were due by now
// records them the same way, in its registration's transaction. Real PostgreSQL; the schedule is
// ticked by hand with an injected clock, the registration runs at the database's now.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

const playbook = (path: string, triggers: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: versions, path: ${path} }
${triggers}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

async function register(path: string, triggers: string): Promise<void> {
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: playbook(path, triggers) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

type Fire = { fire_key: string; outcome: string; error: string | null };
async function fires(path: string): Promise<Fire[]> {
  const { rows } = await a.deps.db.query<Fire>(`SELECT fire_key, outcome, error FROM core.trigger_fire WHERE path = $1 ORDER BY fire_key`, [path]);
  return rows;
}

/** A queue schedule every 10 s whose first run (no worker: it stays running) holds the next five due times. */
async function queueHoldingFive(path: string): Promise<Date> {
  await register(path, 'triggers:\n  - { name: t, kind: schedule, cron: "*/10 * * * * *", overlap: queue, max_catch_up: 3 }');
  const t0 = new Date(Math.floor((Date.now() - 60_000) / 10_000) * 10_000);
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1`, [path, t0]);
  const tick = (ms: number) => runScheduleTick(a.deps, () => new Date(t0.getTime() + ms));
  expect(await tick(10)).toMatchObject({ started: 1 });
  for (let s = 10; s <= 50; s += 10) expect(await tick(s * 1000 + 10)).toMatchObject({ started: 0, skipped: 0 });
  expect((await fires(path)).map((f) => f.outcome)).toEqual(['started']);
  return t0;
}

/** Every due time after t0 up to the registration is recorded skipped; the newest three say `why`. */
function expectQueueEnded(seen: Fire[], t0: Date, why: string): void {
  expect(seen[0]).toMatchObject({ fire_key: t0.toISOString(), outcome: 'started' });
  const skipped = seen.slice(1);
  for (let s = 10; s <= 50; s += 10) expect(skipped.map((f) => f.fire_key)).toContain(new Date(t0.getTime() + s * 1000).toISOString());
  expect(skipped.every((f) => f.outcome === 'skipped')).toBe(true);
  for (const f of skipped.slice(-3)) expect(f.error).toMatch(new RegExp(`^${why} while this time waited its turn \\(execution \\d+ still running\\)$`));
  for (const f of skipped.slice(0, -3)) expect(f.error).toBe('overlap queue: more than 3 due times waiting (max_catch_up)');
}

it("a version that changes a queue schedule's cron records the due times waiting for its run as skipped", async () => {
  const path = 'versions/cron-changed';
  const t0 = await queueHoldingFive(path);
  await register(path, 'triggers:\n  - { name: t, kind: schedule, cron: "*/15 * * * * *", overlap: queue, max_catch_up: 3 }');
  const seen = await fires(path);
  expectQueueEnded(seen, t0, 'schedule changed by a new version of its playbook');
  const listed = (await http(a.url, 'GET', '/api/triggers?kind=schedule')).body.triggers.find((t: Json) => t.path === path);
  expect(listed).toMatchObject({ fires: 1, skipped: seen.length - 1 });
  // Its next fire is the new cron's, after now: none of the old times is left to start.
  expect(Date.parse(listed.next_fires[0]) % 15_000).toBe(0);
  expect(Date.parse(listed.next_fires[0])).toBeGreaterThan(Date.now() - 1000);
});

it('a version without the schedule records them too; one that keeps its cron keeps its queue', async () => {
  const kept = 'versions/cron-kept';
  await queueHoldingFive(kept);
  // The same cron, another max_catch_up: the queue stays, nothing is recorded.
  await register(kept, 'triggers:\n  - { name: t, kind: schedule, cron: "*/10 * * * * *", overlap: queue, max_catch_up: 4 }');
  expect((await fires(kept)).map((f) => f.outcome)).toEqual(['started']);

  const path = 'versions/removed';
  const t0 = await queueHoldingFive(path);
  await register(path, '');
  expectQueueEnded(await fires(path), t0, 'schedule removed by a new version of its playbook');
});
