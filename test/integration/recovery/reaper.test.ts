// The command reaper's sweep (POST /api/admin/command_reaper/sweep) against rows set up through
// the API and aged by SQL, and the claim policy that then hands stranded commands to live workers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { claimNextCommands } from '../../../src/db/command.repo.ts';
import { sweepStrandedCommands } from '../../../src/periodic/command-reaper.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let db: pg.Client;
const PATH = 'reaper/one';
beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const r = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: ${PATH} }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n`,
  });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const sweep = () => http(t.url, 'POST', '/api/admin/command_reaper/sweep');
const register = (name: string) => http(t.url, 'POST', '/api/worker/pool/register', { name, capacity: 4 }, asWorker);
const beat = (name: string, running?: number[]) => http(t.url, 'POST', '/api/worker/pool/heartbeat', { name, ...(running ? { running } : {}) }, asWorker);
const claimNext = async (workerId: string, max: number): Promise<Json[]> => {
  const r = await http(t.url, 'POST', '/api/worker/claim', { worker_id: workerId, max, wait_ms: 0 }, asWorker);
  expect(r.status).toBe(200);
  return r.body.commands;
};
const commandRow = async (id: number) => (await db.query(`SELECT status, attempt, worker_id, reclaim_attempt FROM core.command WHERE command_id = $1`, [id])).rows[0];
/** Each command's row, in order: one query after another (one client runs one query at a time). */
const commandRows = async (ids: number[]) => {
  const rows = [];
  for (const id of ids) rows.push(await commandRow(id));
  return rows;
};

/** Starts an execution and returns its (PENDING) command id. */
async function pendingCommand(): Promise<number> {
  const id = (await http(t.url, 'POST', '/api/run/playbook', { path: PATH })).body.execution_id;
  return (await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id])).rows[0].command_id;
}

/** Claims every PENDING command as `workerId` so the next test starts from nothing pending. */
async function drainPending(workerId = 'drainer'): Promise<void> {
  await register(workerId);
  while ((await claimNext(workerId, 100)).length) {
    // keep claiming
  }
  await db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE worker_id = $1 AND status = 'CLAIMED'`, [workerId]);
}

describe('command reaper sweep', () => {
  it('republishes a PENDING command whose notification is older than the retry age, once per retry age', async () => {
    const commandId = await pendingCommand();
    const notes: string[] = [];
    const listener = new pg.Client({ connectionString: t.databaseUrl });
    await listener.connect();
    listener.on('notification', (n) => notes.push(n.payload ?? ''));
    await listener.query('LISTEN svc_commands');
    try {
      const young = await sweep();
      expect(young.status).toBe(200);
      expect(young.body).toMatchObject({ status: 'ok', republished: 0 });
      expect(young.body.scanned).toBeGreaterThanOrEqual(1);

      await db.query(`UPDATE core.command SET published_at = now() - interval '2 hours' WHERE command_id = $1`, [commandId]);
      const old = await sweep();
      expect(old.body).toMatchObject({ status: 'ok', republished: 1, by_reason: { pending_stale: 1 } });
      await until('the notification', () => notes.includes('1'));
      // Republished, not moved: it waits for a claimer as before.
      expect(await commandRow(commandId)).toMatchObject({ status: 'PENDING', attempt: 0 });
      // Its publication is fresh again: the next sweep leaves it alone.
      expect((await sweep()).body).toMatchObject({ republished: 0 });
    } finally {
      await listener.end();
      await drainPending();
    }
  });

  it('marks claims whose holder is stopped, stale, missing or lost them, or past the hard timeout; never moves one itself', async () => {
    const ids: Record<string, number> = {};
    for (const name of ['stopped', 'quiet', 'lost', 'slow', 'fine']) {
      await register(name);
      ids[name] = await pendingCommand();
      const [claimed] = await claimNext(name, 1);
      expect(claimed.command_id).toBe(ids[name]);
    }
    ids.ghost = await pendingCommand();
    expect((await http(t.url, 'POST', `/api/commands/${ids.ghost}/claim`, { worker_id: 'ghost' }, asWorker)).status).toBe(200);

    await http(t.url, 'POST', '/api/worker/pool/deregister', { name: 'stopped' }, asWorker);
    await db.query(`UPDATE core.runtime SET heartbeat_at = now() - interval '1 hour' WHERE name = 'quiet'`);
    await db.query(`UPDATE core.command SET heartbeat_at = now() - interval '1 hour' WHERE command_id = $1`, [ids.ghost]);
    // 'lost' claimed its command long ago and its latest beat no longer lists it (a pool restarted).
    await db.query(`UPDATE core.command SET claimed_at = now() - interval '2 hours' WHERE command_id = $1`, [ids.lost]);
    expect((await beat('lost', [])).status).toBe(200);
    // 'slow' beats and lists its command, but has held it past SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS.
    await db.query(`UPDATE core.command SET claimed_at = now() - interval '2 hours' WHERE command_id = $1`, [ids.slow]);
    expect((await beat('slow', [ids.slow])).status).toBe(200);
    expect((await beat('fine', [ids.fine])).status).toBe(200);
    const before = await commandRows(Object.values(ids));

    const r = await sweep();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'ok',
      scanned: expect.any(Number),
      republished: 5,
      by_reason: { worker_not_ready: 1, worker_stale: 1, orphaned: 1, hard_timeout: 1, worker_missing: 1 },
      released: 0,
      withdrawn: 0,
    });
    expect(r.body.scanned).toBeGreaterThanOrEqual(6);
    // Nothing moved: status, attempt and holder are what they were; only the mark is new.
    const after = await commandRows(Object.values(ids));
    expect(after.map(({ status, attempt, worker_id }) => ({ status, attempt, worker_id }))).toEqual(
      before.map(({ status, attempt, worker_id }) => ({ status, attempt, worker_id })),
    );
    expect((await commandRow(ids.fine)).reclaim_attempt).toBeNull();

    // A live worker's next claim takes the ones the policy lets go, each as a new attempt. The
    // hard-timed-out one stays with its healthy holder (no SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS).
    await register('taker');
    const taken = await claimNext('taker', 10);
    expect(taken.map((c: Json) => c.command_id).sort((a: number, b: number) => a - b)).toEqual([ids.stopped, ids.quiet, ids.lost, ids.ghost].sort((a, b) => a - b));
    for (const c of taken) expect(c).toMatchObject({ attempt: 2, status: 'CLAIMED' });
    expect(await commandRow(ids.slow)).toMatchObject({ worker_id: 'slow', attempt: 1 });
    expect(await commandRow(ids.fine)).toMatchObject({ worker_id: 'fine', attempt: 1 });
    // With the claim endpoint's hard timeout set, the policy lets that one go too.
    const [hard] = await claimNextCommands(t.deps.db, 'taker', 10, { staleSeconds: 60, hardTimeoutSeconds: 1800 });
    expect(hard).toMatchObject({ command_id: ids.slow, attempt: 2, worker_id: 'taker' });
    await db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE command_id = ANY($1)`, [Object.values(ids)]);
  });

  it('a report claims a stranded command ahead (claim-ahead), and the old holder\'s report is refused and kept in the log', async () => {
    await register('crashed');
    const strandedId = await pendingCommand();
    const [old] = await claimNext('crashed', 1);
    expect(old.command_id).toBe(strandedId);
    await db.query(`UPDATE core.runtime SET heartbeat_at = now() - interval '1 hour' WHERE name = 'crashed'`);
    expect((await sweep()).body).toMatchObject({ republished: 1, by_reason: { worker_stale: 1 } });

    await register('alive');
    const ownId = await pendingCommand();
    const own = (await http(t.url, 'POST', `/api/commands/${ownId}/claim`, { worker_id: 'alive' }, asWorker)).body;
    expect(own).toMatchObject({ command_id: ownId, attempt: 1 });
    const done = (c: Json, worker: string, data: string) => ({
      execution_id: c.execution_id, command_id: c.command_id, attempt: c.attempt, worker_id: worker, event_type: 'command.completed', result: { tasks: { n: { status: 'ok', data } } },
    });
    const report = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'alive', events: [done(own, 'alive', 'own')], claim: 2 }, asWorker);
    expect(report.status).toBe(200);
    expect(report.body.commands).toEqual([expect.objectContaining({ command_id: strandedId, attempt: 2 })]);
    const retaken = report.body.commands[0];

    // The first holder comes back with its result while the second attempt runs: refused,
    // recorded, folded into nothing (the execution goes on waiting for the second attempt).
    const stale = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'crashed', events: [done(old, 'crashed', 'first attempt')], claim: 0 }, asWorker);
    expect(stale.status).toBe(200);
    expect(stale.body.results[0]).toMatchObject({ event_id: null, error: 'stale_claim' });
    expect((await http(t.url, 'GET', `/api/executions/${old.execution_id}`)).body.status).toBe('running');

    const finish = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'alive', events: [done(retaken, 'alive', 'second attempt')], claim: 0 }, asWorker);
    expect(finish.body.results[0].event_id).toEqual(expect.any(Number));
    expect((await http(t.url, 'GET', `/api/executions/${old.execution_id}`)).body).toMatchObject({ status: 'completed', result: 'second attempt' });
    // Once the second attempt finished it, a report of the first is still a stale claim's.
    const late = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'crashed', events: [done(old, 'crashed', 'first attempt again')], claim: 0 }, asWorker);
    expect(late.body.results[0]).toMatchObject({ event_id: null, error: 'stale_claim' });
    expect((await http(t.url, 'GET', `/api/executions/${old.execution_id}`)).body).toMatchObject({ status: 'completed', result: 'second attempt' });
    const events: Json[] = (await http(t.url, 'GET', `/api/events/${old.execution_id}`)).body.events;
    // The command completes once in the log; the first holder's reports are recorded as refusals.
    const completions = events.filter((e) => e.event_type === 'command.completed' || e.event_type === 'command.refused');
    expect(completions.map((e) => [e.event_type, e.worker_id, e.context.refused ?? null, e.context.attempt ?? null])).toEqual([
      ['command.refused', 'crashed', 'stale_claim', 1],
      ['command.completed', 'alive', null, null],
      ['command.refused', 'crashed', 'stale_claim', 1],
    ]);
    expect(events.find((e) => e.event_type === 'command.claimed')?.context).toMatchObject({ attempt: 2, worker_id: 'alive' });
  });

  it('leaves a marked claim with its holder when the holder beats again before anyone claims it', async () => {
    await register('flaky');
    const id = await pendingCommand();
    await claimNext('flaky', 1);
    await db.query(`UPDATE core.runtime SET heartbeat_at = now() - interval '1 hour' WHERE name = 'flaky'`);
    expect((await sweep()).body).toMatchObject({ republished: 1 });
    expect((await commandRow(id)).reclaim_attempt).toBe(1);
    expect((await beat('flaky', [id])).status).toBe(200);
    await register('other');
    expect(await claimNext('other', 5)).toEqual([]);
    expect(await commandRow(id)).toMatchObject({ worker_id: 'flaky', attempt: 1 });
    await db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE command_id = $1`, [id]);
  });

  it('recovers at most SVC_COMMAND_REAPER_MAX_PER_RUN rows per sweep, stranded claims first', async () => {
    await register('many');
    const claimed: number[] = [];
    for (let i = 0; i < 3; i++) claimed.push(await pendingCommand());
    await claimNext('many', 3);
    const pending = await pendingCommand();
    await db.query(`UPDATE core.runtime SET heartbeat_at = now() - interval '1 hour' WHERE name = 'many'`);
    await db.query(`UPDATE core.command SET published_at = now() - interval '1 hour' WHERE command_id = $1`, [pending]);
    const deps = { ...t.deps, config: { ...t.deps.config, SVC_COMMAND_REAPER_MAX_PER_RUN: 2 } };
    expect(await sweepStrandedCommands(deps, { trigger: 'nudge', minGapSeconds: null })).toMatchObject({ status: 'ok', republished: 2, by_reason: { worker_stale: 2 } });
    expect((await commandRow(claimed[2])).reclaim_attempt).toBeNull();
    const all = await sweepStrandedCommands({ ...deps, config: { ...deps.config, SVC_COMMAND_REAPER_MAX_PER_RUN: 10 } }, { trigger: 'nudge', minGapSeconds: null });
    expect(all).toMatchObject({ status: 'ok', republished: 4, by_reason: { worker_stale: 3, pending_stale: 1 } });
    await db.query(`UPDATE core.command SET status = 'CANCELLED' WHERE command_id = ANY($1)`, [[...claimed, pending]]);
  });

  it('answers 409 sweep_in_progress while another holder\'s lease is live; a dead holder\'s lease expires', async () => {
    // A server that died mid-sweep: its lease stays until it expires.
    await db.query(
      `INSERT INTO core.runtime (kind, name, status, holder, heartbeat_at, lease_expires_at) VALUES ('lease', 'command_reaper', 'held', 'dead-server', now(), now() + interval '2 seconds')
       ON CONFLICT (kind, name) DO UPDATE SET status = 'held', holder = 'dead-server', lease_expires_at = now() + interval '2 seconds'`,
    );
    const busy = await sweep();
    expect(busy.status).toBe(409);
    expect(busy.body.detail).toMatchObject({ code: 'sweep_in_progress', message: expect.stringContaining('dead-server') });
    const free = await until('the dead holder\'s lease to expire', async () => {
      const r = await sweep();
      return r.status === 200 ? r : undefined;
    }, 10_000, 200);
    expect(free.body.status).toBe('ok');
    // A finished sweep gives the lease back: the next nudge runs at once.
    expect((await sweep()).status).toBe(200);
  });

  it('counts sweeps, rows scanned and republished commands by reason on /metrics', async () => {
    const text = (await http(t.url, 'GET', '/metrics')).body as string;
    expect(text).toMatch(/^svc_command_reaper_sweeps_total\{trigger="nudge"\} [1-9]\d*$/m);
    expect(text).toMatch(/^svc_command_reaper_scanned_total [1-9]\d*$/m);
    expect(text).toMatch(/^svc_command_reaper_republished_total\{reason="worker_stale"\} [1-9]\d*$/m);
    expect(text).toMatch(/^svc_command_reaper_republished_total\{reason="pending_stale"\} [1-9]\d*$/m);
  });
});
