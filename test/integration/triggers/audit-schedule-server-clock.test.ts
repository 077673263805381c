// A server whose clock ran ahead of PostgreSQL's fired schedules early, by its skew: 30 s ahead, a
// time scheduled for :00 started at :30 of the minute before (by the database's clock, which the
// fire's own record keeps). The scheduler now counts due times on the database's clock, as waits do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, waitForHealth } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

const AHEAD_MS = 30_000;
const PATH = 'audit/sched_clock';

let ps: ServerProcesses;
let stop = () => {};
beforeAll(async () => {
  ps = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  stop();
  await ps?.close();
});

/**
 * A server whose wall clock is AHEAD_MS ahead: `new Date()` as well as `Date.now()` (skewed-server.ts
 * moves only Date.now, and the scheduler reads `new Date()`); its timers are not moved.
 */
async function startAheadServer(): Promise<{ base: string; kill(): void }> {
  const preload = join(ps.dir, 'clock-ahead-dates.mjs');
  await writeFile(preload, `const now = Date.now;
const Real = Date;
const ahead = () => now() + ${AHEAD_MS};
class Skewed extends Real {
  constructor(...args) { if (args.length === 0) super(ahead()); else super(...args); }
  static now() { return ahead(); }
}
globalThis.Date = Skewed;
`);
  const port = await freePort();
  const server = spawnSvc(['server'], { SVC_DATABASE_URL: ps.database.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_PORT: String(port), SVC_HOST: '127.0.0.1', NODE_OPTIONS: `--import ${preload}` });
  const kill = () => server.kill('SIGKILL');
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(`${base}/api/health`, 30_000).catch((e: unknown) => {
    kill();
    throw new Error(`${String(e)}: ${server.output()}`);
  });
  return { base, kill };
}

describe('a schedule on a server whose clock is ahead of the database', () => {
  it('fires each time when the database clock reaches it, not its skew early', async () => {
    const server = await startAheadServer();
    stop = server.kill;
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
    // Each committed at or after its time on the database's clock (fired_at is clock_timestamp()).
    for (const f of made) expect(f.early_ms, `${f.fire_key} fired ${Math.round(f.early_ms)} ms before its time`).toBeLessThanOrEqual(0);
    // And on time by it: within a look or two (a tick sleeps until the next fire, at most 1 s).
    for (const f of made) expect(f.early_ms, `${f.fire_key} fired ${-Math.round(f.early_ms)} ms late`).toBeGreaterThan(-5_000);
  }, 120_000);
});
