// Two `svc server`s on one database, a schedule firing every second, a worker on each server. The
// server holding the command reaper's lease is SIGSTOPped in the middle of its sweep (its statement
// waits for a table lock the test holds, then runs while the process stands still) for longer than
// the lease, so the other takes it over; then SIGCONTed, acting on what it read before. Every
// scheduled time is fired once, every execution completes with each step done once and no gap in
// its event log, and a command the reaper let go is run once more, not twice.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { asWorker } from '../../helpers/auth.ts';
import { noopPlaybook } from '../../helpers/batch.ts';
import { http } from '../../helpers/http.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

// The reaper's lease lasts 30 s (src/periodic/command-reaper.ts): the freeze outlasts it.
const FREEZE_MS = 33_000;
const ENV = {
  SVC_COMMAND_REAPER_INTERVAL_SECONDS: '1',
  SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '2',
  SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS: '1',
  SVC_AUTO_RESUME_MIN_STALE_SECONDS: '3600',
};

let bed: ServerProcesses;
beforeAll(async () => {
  bed = await ServerProcesses.open(ENV);
}, 60_000);
afterAll(async () => {
  await bed?.close();
});

const schedule = `apiVersion: svc/v1
metadata: { name: tick, path: frozen/tick }
triggers:
  - { name: every_second, kind: schedule, cron: "* * * * * *", overlap: allow, catch_up: all, max_catch_up: 60 }
workflow:
  - step: s1
    tool: { name: t, kind: noop }
    next: s2
  - step: s2
    tool: { name: t, kind: noop }
`;

/** The pid in the reaper lease's holder (`host-pid-nonce`) while it is held, else undefined. */
async function reaperHolder(): Promise<number | undefined> {
  const { rows } = await bed.db.query<{ holder: string }>(`SELECT holder FROM core.runtime WHERE kind = 'lease' AND name = 'command_reaper' AND status = 'held' AND lease_expires_at > now()`);
  const m = rows[0] ? /-(\d+)-[0-9a-f]{8}$/.exec(rows[0].holder) : null;
  return m ? Number(m[1]) : undefined;
}

it('a lease holder frozen mid-sweep past its lease, then resumed, fires nothing twice and runs nothing twice', async () => {
  const servers: ServerProcess[] = [await bed.server(), await bed.server()];
  expect((await http(servers[0].base, 'POST', '/api/catalog/playbook', { content: noopPlaybook('frozen/hand', 1) })).status).toBe(201);
  // A command claimed by a worker nobody hears from: the reaper lets it go, a live worker runs it.
  const hand = (await http(servers[1].base, 'POST', '/api/run/playbook', { path: 'frozen/hand', payload: {} })).body.execution_id;
  const { rows: cmd } = await bed.db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [hand]);
  expect((await http(servers[1].base, 'POST', `/api/commands/${cmd[0].command_id}/claim`, { worker_id: 'hand' }, asWorker)).status).toBe(200);
  expect((await http(servers[0].base, 'POST', '/api/catalog/playbook', { content: schedule })).status).toBe(201);
  for (const s of servers) await bed.worker(s.base, 2);
  await until('fires', async () => (await bed.db.query(`SELECT 1 FROM core.trigger_fire WHERE path = 'frozen/tick'`)).rows.length >= 2, 30_000, 200);

  // Every sweep's statement waits for core.command: the next sweep's server holds the lease meanwhile.
  const lock = new pg.Client({ connectionString: bed.database.url });
  await lock.connect();
  let frozen: ServerProcess | undefined;
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE core.command IN ACCESS EXCLUSIVE MODE');
    const pid = await until('a sweep holding the lease', reaperHolder, 10_000, 50);
    frozen = servers.find((s) => s.proc.proc.pid === pid);
    expect(frozen, `lease holder pid ${pid}`).toBeDefined();
    frozen!.proc.kill('SIGSTOP');
    await lock.query('COMMIT');
    const other = servers.find((s) => s !== frozen)!;
    // The other server takes the lease over once it has run out, and sweeps.
    const taken = Date.now();
    await until('the other server to take the lease over', async () => (await reaperHolder()) === other.proc.proc.pid, FREEZE_MS + 25_000, 100);
    console.log(`lease taken over after ${Date.now() - taken} ms of the freeze`);
  } finally {
    await lock.end();
    frozen?.proc.kill('SIGCONT');
  }
  // The resumed server acts on what it read before the freeze, then on what it reads now.
  const resumedAt = new Date(Date.now() + 3_000).toISOString();
  await until('a fire after the resume', async () => (await bed.db.query(`SELECT 1 FROM core.trigger_fire WHERE path = 'frozen/tick' AND scheduled_time > $1`, [resumedAt])).rows.length > 0, 20_000, 200);
  await bed.stopAll();

  const { rows: fires } = await bed.db.query<{ fire_key: string; outcome: string; execution_id: string | null }>(`SELECT fire_key, outcome, execution_id FROM core.trigger_fire WHERE path = 'frozen/tick' ORDER BY fire_key`);
  expect(fires.filter((f) => f.outcome !== 'started' || f.execution_id === null)).toEqual([]);
  const times = fires.map((f) => Date.parse(f.fire_key));
  for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1], `gap after ${fires[i - 1].fire_key}`).toBe(1000);
  // One execution per fire key.
  const { rows: starts } = await bed.db.query<{ fire_key: string; n: number }>(
    `SELECT context->'trigger'->>'fire_key' AS fire_key, count(*)::int AS n FROM core.event
      WHERE event_type = 'execution.started' AND context->'trigger'->>'name' = 'every_second' GROUP BY 1 HAVING count(*) > 1`,
  );
  expect(starts).toEqual([]);

  // Each execution: no gap, each step completed once; the ones still running when the servers stopped are left.
  const { rows: executions } = await bed.db.query<{ execution_id: number; status: string }>(`SELECT execution_id, status FROM core.execution ORDER BY execution_id`);
  let completed = 0;
  for (const e of executions) {
    const { rows } = await bed.db.query(`SELECT event_id, event_type, step FROM core.event WHERE execution_id = $1 ORDER BY event_id`, [e.execution_id]);
    expect(rows.map((r) => Number(r.event_id)), `execution ${e.execution_id}: no gap`).toEqual(rows.map((_, i) => i + 1));
    const done = rows.filter((r) => r.event_type === 'command.completed').map((r) => r.step);
    expect(new Set(done).size, `execution ${e.execution_id}: each step done once (${done})`).toBe(done.length);
    if (e.status === 'completed') completed++;
  }
  expect(completed).toBeGreaterThan(FREEZE_MS / 1000);
  const { rows: handRow } = await bed.db.query(`SELECT status, attempt FROM core.command WHERE execution_id = $1`, [hand]);
  expect(handRow[0]).toMatchObject({ status: 'COMPLETED', attempt: 2 });
}, 150_000);
