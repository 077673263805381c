// The doctor's three tools against a real `svc start` process (server and in-process workers, as
// `npm start` runs them) over the CLI and over `svc doctor serve`: healthy state (exit 0), a seeded
// stuck state (exit 2), repair against a server without the reaper endpoint (no-op, exit 0), and
// the reaper nudge end to end once the server has it.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { asWorker, createApiToken } from '../../helpers/auth.ts';
import { createMigratedDatabase, createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForHealth, waitForOutput, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess } from '../../helpers/worker-process.ts';
import { runDoctor, serveDoctor, type ServedDoctor } from './run-doctor.ts';

const SWEEP = '/api/admin/command_reaper/sweep';
const CHECKS = ['stuck_executions', 'dead_worker_claims', 'stranded_pending_commands', 'stale_worker_pools'];
const NOOP_PLAYBOOK = (path: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: seeded, path: ${path} }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n`;

type Server = { url: string; proc: SvcProcess; stop(): Promise<void> };

/** `svc <command>` on the test database at a free port, once its banner is out (its pool has registered). */
async function startSvc(command: 'start' | 'server', env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = spawnSvc([command], { SVC_PORT: String(port), SVC_HOST: '127.0.0.1', ...env });
  try {
    // A start that fails (exits) is reported at once, not after the wait.
    const exited = proc.exited.then((code) => Promise.reject(new Error(`svc ${command} exited with ${code}`)));
    exited.catch(() => {}); // once started, an exit is stop()'s business
    await Promise.race([waitForHealth(`${url}/api/health`, 60_000), exited]);
    await waitForOutput(proc, 'Ctrl-C stops it.', 20_000);
  } catch (error) {
    proc.kill('SIGKILL');
    throw new Error(`${String(error)}\n${proc.output()}`);
  }
  return {
    url,
    proc,
    async stop() {
      proc.kill('SIGTERM');
      await withTimeout(proc.exited, 20_000, `svc ${command} stop`);
    },
  };
}

const serverEnv = (t: TestDatabase) => ({
  SVC_DATABASE_URL: t.url,
  SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  // The seeded stuck state must stay as seeded while the doctor looks at it.
  SVC_COMMAND_REAPER_ENABLED: 'false',
});

/** Runs fn against `svc <command>` on a database of its own, then stops both. */
async function withOwnServer(command: 'start' | 'server', extraEnv: Record<string, string>, fn: (server: Server, own: TestDatabase) => Promise<void>): Promise<void> {
  const own = await createTestDatabase();
  try {
    const server = await startSvc(command, { ...serverEnv(own), ...extraEnv });
    try {
      await fn(server, own);
    } finally {
      await server.stop();
    }
  } finally {
    await own.drop();
  }
}

/** Runs fn while a `svc worker` process claims from `url`, then drains it. */
async function withWorker(url: string, env: Record<string, string>, fn: () => Promise<void>): Promise<void> {
  const worker = await startWorkerProcess(url, { env });
  try {
    await fn();
  } finally {
    await worker.stop();
  }
}

let t: TestDatabase & { db: import('../../../src/db/db.ts').Db };
let svc: Server;
let served: ServedDoctor;
let livePool: string; // the name of svc's in-process pool, from its banner

beforeAll(async () => {
  t = await createMigratedDatabase();
  svc = await startSvc('start', serverEnv(t));
  served = await serveDoctor(svc.url);
  livePool = /in-process slots \((\S+)\)/.exec(svc.proc.output())![1];
});
afterAll(async () => {
  await served?.stop();
  await svc?.stop();
  await t?.drop();
});

/**
 * Seeds what a SIGKILLed worker pool leaves behind: its runtime row with a 10-minute-old heartbeat,
 * an execution idle for 90 minutes whose command the pool holds CLAIMED, and a PENDING command
 * created 10 minutes ago; and a second execution, as idle, whose command the server's live pool
 * holds: busy, not stuck. The commands stay row-locked by an open transaction, so the live
 * in-process workers skip them (SKIP LOCKED) as they would skip a lost notification; the doctor's
 * reads are not blocked. The server is paused (SIGSTOP) from the insert until the lock is held,
 * so its workers cannot claim in between. `remove()` deletes it all in that transaction.
 */
async function seedStuckState(): Promise<{ executionId: number; busyExecutionId: number; claimedId: number; pendingId: number; pool: string; remove(): Promise<void> }> {
  const path = `seeded/stuck_${randomBytes(3).toString('hex')}`;
  const { catalog_id: catalogId } = await executionApi(svc.url).register(NOOP_PLAYBOOK(path));
  const pool = `dead-pool-${randomBytes(3).toString('hex')}`;
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  svc.proc.kill('SIGSTOP');
  await client.query('BEGIN');
  try {
    await client.query(`INSERT INTO core.runtime (kind, name, status, capacity, heartbeat_at) VALUES ('worker_pool', $1, 'ready', 4, now() - interval '10 minutes')`, [pool]);
    const ex = await client.query<{ execution_id: string }>(
      `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, started_at, updated_at)
       SELECT id, $1, $2, id, 'running', now() - interval '2 hours', now() - interval '90 minutes'
         FROM (SELECT nextval('core.execution_id_seq') AS id FROM generate_series(1, 2)) s
       RETURNING execution_id`,
      [catalogId, path],
    );
    const [executionId, busyExecutionId] = ex.rows.map((r) => Number(r.execution_id));
    const cmds = await client.query<{ command_id: string; status: string }>(
      `INSERT INTO core.command (execution_id, catalog_id, seq, step, status, worker_id, input, claimed_at, heartbeat_at, created_at)
       VALUES ($1, $2, 1, 'start', 'CLAIMED', $3, '{}', now() - interval '80 minutes', now() - interval '80 minutes', now() - interval '80 minutes'),
              ($1, $2, 2, 'start', 'PENDING', NULL, '{}', NULL, NULL, now() - interval '10 minutes'),
              ($4, $2, 1, 'start', 'RUNNING', $5, '{}', now() - interval '80 minutes', now() - interval '80 minutes', now() - interval '80 minutes')
       RETURNING command_id, status`,
      [executionId, catalogId, pool, busyExecutionId, livePool],
    );
    await client.query('COMMIT');
    const id = (status: string) => Number(cmds.rows.find((r) => r.status === status)!.command_id);
    const [claimedId, pendingId] = [id('CLAIMED'), id('PENDING')];
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM core.command WHERE execution_id = ANY($1) FOR UPDATE', [[executionId, busyExecutionId]]);
    svc.proc.kill('SIGCONT');
    return {
      executionId,
      busyExecutionId,
      claimedId,
      pendingId,
      pool,
      async remove() {
        await client.query('DELETE FROM core.command WHERE execution_id = ANY($1)', [[executionId, busyExecutionId]]);
        await client.query('DELETE FROM core.execution WHERE execution_id = ANY($1)', [[executionId, busyExecutionId]]);
        await client.query(`DELETE FROM core.runtime WHERE kind = 'worker_pool' AND name = $1`, [pool]);
        await client.query('COMMIT');
        await client.end();
      },
    };
  } catch (error) {
    svc.proc.kill('SIGCONT');
    await client.query('ROLLBACK').catch(() => {});
    await client.end();
    throw error;
  }
}

const ids = (items: { [k: string]: unknown }[], key: string) => items.map((i) => i[key]);

describe('svc doctor on a healthy server', () => {
  it('detect: every check ok, exit 0; registering its playbooks once, not on every run', async () => {
    const run = await runDoctor(['detect', '--server', svc.url, '--json']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const o = run.json();
    expect(o).toMatchObject({ action: 'detect', severity: 'ok', data: { server: svc.url, thresholds: { stuck_minutes: 30, pending_seconds: 300, worker_stale_seconds: 60 } } });
    expect(Object.keys(o.data.checks).sort()).toEqual([...CHECKS].sort());
    for (const name of CHECKS) expect(o.data.checks[name], name).toMatchObject({ severity: 'ok', count: 0, items: [] });
    // The detection ran as executions of the catalog's playbooks, and they completed.
    const execution = await http(svc.url, 'GET', `/api/executions/${o.data.checks.stuck_executions.execution_id}`);
    expect(execution.body).toMatchObject({ status: 'completed', path: 'doctor/stuck_executions' });

    const text = await runDoctor(['detect', '--server', svc.url, '--text']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('svc doctor detect: OK');
    expect(text.stdout).toContain('no anomaly');
    for (const name of CHECKS) {
      const entry = await http(svc.url, 'GET', `/api/catalog/playbook/doctor/${name}`);
      expect(entry.status, name).toBe(200);
      expect(entry.body.version, `${name} registered again although unchanged`).toBe(1);
    }
  });

  it('reachability: API, database and bus ok, exit 0', async () => {
    const run = await runDoctor(['reachability', '--server', svc.url, '--json']);
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ action: 'reachability', severity: 'ok', data: { api: { status: 'ok', http_status: 200 }, database: { status: 'ok' }, bus: { status: 'ok' } } });
  });

});

describe('svc doctor on a seeded stuck state', () => {
  it('detect finds each anomaly (exit 2), lists its ids and says what to run next; thresholds are flags', async () => {
    const seeded = await seedStuckState();
    try {
      const run = await runDoctor(['detect', '--server', svc.url, '--json']);
      expect(run.code, run.stdout + run.stderr).toBe(2);
      const o = run.json();
      expect(o.severity).toBe('critical');
      const { checks } = o.data;
      expect(checks.stuck_executions).toMatchObject({ severity: 'critical', count: 1 });
      expect(ids(checks.stuck_executions.items, 'execution_id')).toEqual([seeded.executionId]);
      expect(checks.stuck_executions.items[0].idle_minutes).toBeGreaterThanOrEqual(89);
      // The busy execution (its command on the live pool) is neither stuck nor a dead worker's claim.
      expect(checks.dead_worker_claims).toMatchObject({ severity: 'critical', count: 1 });
      expect(checks.dead_worker_claims.items[0]).toMatchObject({ command_id: seeded.claimedId, execution_id: seeded.executionId, worker_id: seeded.pool, reason: 'silent' });
      expect(checks.stranded_pending_commands).toMatchObject({ severity: 'critical', count: 1 });
      expect(ids(checks.stranded_pending_commands.items, 'command_id')).toEqual([seeded.pendingId]);
      expect(checks.stranded_pending_commands.items[0].waiting_seconds).toBeGreaterThanOrEqual(599);
      expect(checks.stale_worker_pools).toMatchObject({ severity: 'warning', count: 1 });
      expect(ids(checks.stale_worker_pools.items, 'name')).toEqual([seeded.pool]);
      expect(o.data.next_steps[0]).toMatch(/^svc doctor repair/);
      expect(o.data.next_steps.join('\n')).toContain('svc cleanup --older-than-minutes 30 --dry-run');

      // The readable form: what is wrong, the ids, what to run next.
      const text = await runDoctor(['detect', '--server', svc.url, '--text']);
      expect(text.code).toBe(2);
      expect(text.stdout).toContain('svc doctor detect: CRITICAL');
      expect(text.stdout).toContain('1 execution has been running for over 30 min with no progress');
      expect(text.stdout).toContain(`execution ${seeded.executionId} (`);
      expect(text.stdout).toContain(`command ${seeded.claimedId} of execution ${seeded.executionId}`);
      expect(text.stdout).toContain(`pool ${seeded.pool} (ready)`);
      expect(text.stdout).toMatch(/next:\n {2}svc doctor repair/);

      // Thresholds past the seeded ages: the same state is no anomaly for these checks.
      const lenient = (await runDoctor(['detect', '--server', svc.url, '--json', '--stuck-minutes', '120', '--pending-seconds', '3600', '--worker-stale-seconds', '3600'])).json();
      expect(lenient.data.thresholds).toMatchObject({ stuck_minutes: 120, pending_seconds: 3600, worker_stale_seconds: 3600 });
      for (const name of CHECKS) expect(lenient.data.checks[name].count, name).toBe(0);
      expect(lenient.severity).toBe('ok');
    } finally {
      await seeded.remove();
    }
    expect((await runDoctor(['detect', '--server', svc.url, '--json'])).code).toBe(0);
  });
});

describe('svc doctor on executions that wait on purpose', () => {
  const waiter = (path: string, head: string, wait: string) =>
    `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: waits, path: ${path} }\n${head}workflow:\n  - step: start\n    wait: ${wait}\n    next: done\n  - step: done\n    tool: { name: n, kind: noop }\n`;
  const waitsOf = async (id: number) => (await http(svc.url, 'GET', `/api/executions/${id}`)).body;

  it('a durable timer, a signal wait and a start queued behind a running holder are waiting, not stuck; a timer overdue past the threshold is', async () => {
    const tag = randomBytes(3).toString('hex');
    const api = executionApi(svc.url);
    await api.register(waiter(`seeded/timer_${tag}`, '', '{ for: 2h }'));
    await api.register(waiter(`seeded/approval_${tag}`, '', '{ signal: approval, timeout: 24h }'));
    await api.register(waiter(`seeded/limited_${tag}`, 'concurrency: { limit: 1 }\n', '{ signal: go }'));
    const timerId = await api.run(`seeded/timer_${tag}`);
    const approvalId = await api.run(`seeded/approval_${tag}`);
    const holderId = await api.run(`seeded/limited_${tag}`);
    const queuedId = await api.run(`seeded/limited_${tag}`);
    const ours = [timerId, approvalId, holderId, queuedId];
    const extra = new pg.Client({ connectionString: t.url });
    await extra.connect();
    try {
      for (const id of [timerId, approvalId, holderId]) await until(`execution ${id} waits`, async () => (await waitsOf(id)).waits?.length > 0);
      expect((await waitsOf(queuedId)).status).toBe('queued');
      // Idle past the threshold (0.03 min = 1.8 s): before, each was reported stuck.
      await new Promise((r) => setTimeout(r, 2_500));
      const run = await runDoctor(['detect', '--server', svc.url, '--json', '--stuck-minutes', '0.03']);
      const o = run.json();
      const stuck = o.data.checks.stuck_executions;
      expect(ids(stuck.items, 'execution_id').filter((id) => ours.includes(Number(id)))).toEqual([]);
      expect(stuck.severity).toBe('ok');
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const waiting = new Map<unknown, { [k: string]: unknown }>(stuck.waiting.items.map((i: { [k: string]: unknown }) => [i.execution_id, i]));
      expect(waiting.get(timerId)).toMatchObject({ waits_for: 'timer', path: `seeded/timer_${tag}` });
      expect(Date.parse(String(waiting.get(timerId)!.until))).toBeGreaterThan(Date.now() + 110 * 60_000);
      expect(waiting.get(approvalId)).toMatchObject({ waits_for: 'signal', signal: 'approval' });
      expect(Date.parse(String(waiting.get(approvalId)!.until))).toBeGreaterThan(Date.now() + 23 * 3600_000);
      expect(waiting.get(holderId)).toMatchObject({ waits_for: 'signal', signal: 'go', until: null });
      expect(waiting.get(queuedId)).toMatchObject({ waits_for: 'limit', limit_name: `@seeded/limited_${tag}`, until: null });
      expect(stuck.summary).toMatch(/no execution is without progress; \d+ executions wait on purpose/);
      const text = await runDoctor(['detect', '--server', svc.url, '--stuck-minutes', '0.03', '--text']);
      expect(text.stdout).toContain(`waiting   execution ${timerId} (seeded/timer_${tag}) waits for a timer until `);
      expect(text.stdout).toContain(`waiting   execution ${queuedId} (seeded/limited_${tag}) waits for room in limit @seeded/limited_${tag}`);

      // A timer an hour past its time and not fired: the timekeeper failed it. (A wait the
      // execution does not know under that seq, so the timekeeper's firing finds it over and
      // leaves it there.)
      await extra.query(`INSERT INTO core.wait (execution_id, seq, step, kind, wake_at) VALUES ($1, 999, 'start', 'timer', now() - interval '1 hour')`, [timerId]);
      const overdue = await runDoctor(['detect', '--server', svc.url, '--json', '--stuck-minutes', '0.03']);
      expect(overdue.code, overdue.stdout + overdue.stderr).toBe(2);
      const found = overdue.json().data.checks.stuck_executions;
      expect(found.severity).toBe('critical');
      expect(found.items.find((i: { [k: string]: unknown }) => i.execution_id === timerId)).toMatchObject({ reason: 'timer_overdue', waits_for: 'timer' });
      expect(ids(found.items, 'execution_id').filter((id) => ours.includes(Number(id)))).toEqual([timerId]);

      // The limit's one holder ended without giving its slot back: the queued start waits for nothing.
      await extra.query(`UPDATE core.execution SET status = 'failed' WHERE execution_id = $1`, [holderId]);
      const orphaned = (await runDoctor(['detect', '--server', svc.url, '--json', '--stuck-minutes', '0.03'])).json().data.checks.stuck_executions;
      expect(orphaned.items.find((i: { [k: string]: unknown }) => i.execution_id === queuedId)).toMatchObject({ reason: 'limit_holders_gone', waits_for: 'limit' });
    } finally {
      await extra.query(`UPDATE core.execution SET status = 'running' WHERE execution_id = $1 AND status = 'failed'`, [holderId]);
      await extra.query('DELETE FROM core.wait WHERE execution_id = $1 AND seq = 999', [timerId]);
      await extra.end();
      for (const id of ours) await http(svc.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' });
    }
  });

  it("a task's command PENDING behind its limit while the holder runs is neither stranded nor stuck", async () => {
    const tag = randomBytes(3).toString('hex');
    const limit = `doctor-${tag}`;
    expect((await http(svc.url, 'PUT', `/api/limits/${limit}`, { concurrency: 1 })).status).toBe(200);
    const path = `seeded/limited_task_${tag}`;
    const api = executionApi(svc.url);
    await api.register(
      `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: nap, path: ${path} }\nworkflow:\n  - step: start\n    tool: { name: nap, kind: postgres, read_only: true, command: "SELECT pg_sleep(12)", limit: { name: ${limit}, key: k } }\n`,
    );
    const holderId = await api.run(path);
    const waiterId = await api.run(path);
    try {
      await until('the holder runs and the other waits PENDING', async () => {
        const rows = await t.db.query<{ execution_id: string; status: string }>('SELECT execution_id, status FROM core.command WHERE execution_id = ANY($1)', [[holderId, waiterId]]);
        const status = new Map(rows.rows.map((r) => [Number(r.execution_id), r.status]));
        return ['CLAIMED', 'RUNNING'].includes(status.get(holderId) ?? '') && status.get(waiterId) === 'PENDING';
      });
      await new Promise((r) => setTimeout(r, 2_500));
      const run = await runDoctor(['detect', '--server', svc.url, '--json', '--stuck-minutes', '0.03', '--pending-seconds', '1']);
      const { checks } = run.json().data;
      expect(ids(checks.stranded_pending_commands.items, 'execution_id')).not.toContain(waiterId);
      expect(ids(checks.stuck_executions.items, 'execution_id')).not.toContain(waiterId);
      expect(checks.stuck_executions.waiting.items.find((i: { [k: string]: unknown }) => i.execution_id === waiterId)).toMatchObject({ waits_for: 'limit', limit_name: limit });
    } finally {
      for (const id of [holderId, waiterId]) await http(svc.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' });
    }
  });
});

describe('svc doctor on work held by a limit without holders', () => {
  it("a task waiting for its rate's next token is waiting, not stranded; one held by a limit not defined is stuck: limit_undefined", async () => {
    const tag = randomBytes(3).toString('hex');
    const rate = `rate-${tag}`;
    expect((await http(svc.url, 'PUT', `/api/limits/${rate}`, { rate: { limit: 1, period_seconds: 3600, burst: 1 } })).status).toBe(200);
    const api = executionApi(svc.url);
    const task = (path: string, limit: string) =>
      `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: q, path: ${path} }\nworkflow:\n  - step: start\n    tool: { name: q, kind: postgres, read_only: true, command: "SELECT 1", limit: { name: ${limit}, key: k } }\n`;
    await api.register(task(`seeded/rated_${tag}`, rate));
    await api.register(task(`seeded/undefined_${tag}`, `nowhere-${tag}`));
    // The first takes the hour's one token; the next waits for the next one.
    const first = await api.run(`seeded/rated_${tag}`);
    expect(await api.wait(first, 30_000)).toMatchObject({ status: 'completed' });
    const rated = await api.run(`seeded/rated_${tag}`);
    const held = await api.run(`seeded/undefined_${tag}`);
    try {
      await until('both wait PENDING', async () => {
        const rows = await t.db.query<{ status: string }>('SELECT status FROM core.command WHERE execution_id = ANY($1)', [[rated, held]]);
        return rows.rows.length === 2 && rows.rows.every((r) => r.status === 'PENDING');
      });
      await new Promise((r) => setTimeout(r, 2_500));
      const run = await runDoctor(['detect', '--server', svc.url, '--json', '--stuck-minutes', '0.03', '--pending-seconds', '1']);
      const { checks } = run.json().data;
      expect(ids(checks.stuck_executions.items, 'execution_id')).not.toContain(rated);
      expect(checks.stuck_executions.waiting.items.find((i: { [k: string]: unknown }) => i.execution_id === rated)).toMatchObject({ waits_for: 'limit', limit_name: rate });
      expect(ids(checks.stranded_pending_commands.items, 'execution_id')).not.toContain(rated);
      expect(checks.stuck_executions.items.find((i: { [k: string]: unknown }) => i.execution_id === held)).toMatchObject({ reason: 'limit_undefined', waits_for: 'limit', limit_name: `nowhere-${tag}` });
    } finally {
      for (const id of [rated, held]) await http(svc.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' });
    }
  });
});

describe('svc doctor serve (HTTP)', () => {
  it('GET /healthz and GET /tools: the three tools with their argument schemas', async () => {
    expect(await served.call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const tools = await served.call('GET', '/tools');
    expect(tools.status).toBe(200);
    expect(tools.body.tools.map((x: { name: string }) => x.name)).toEqual(['detect', 'reachability', 'repair_trigger_reaper']);
    for (const tool of tools.body.tools) {
      expect(typeof tool.description).toBe('string');
      expect(tool.input_schema).toMatchObject({ type: 'object' });
    }
    expect(Object.keys(tools.body.tools[0].input_schema.properties)).toEqual(['stuck_minutes', 'pending_seconds', 'worker_stale_seconds', 'limit', 'timeout_seconds']);
  });

  it('POST /tools/{tool}/invoke answers the same outcome objects: healthy, then the seeded anomalies', async () => {
    const healthy = await served.call('POST', '/tools/detect/invoke', {});
    expect(healthy.status).toBe(200);
    expect(healthy.body).toMatchObject({ action: 'detect', severity: 'ok' });
    const reach = await served.call('POST', '/tools/reachability/invoke');
    expect(reach).toMatchObject({ status: 200, body: { action: 'reachability', severity: 'ok', data: { bus: { status: 'ok' } } } });
    const repair = await served.call('POST', '/tools/repair_trigger_reaper/invoke', {});
    expect(repair.status).toBe(200);
    expect(repair.body).toMatchObject({ action: 'repair_trigger_reaper', severity: 'ok' });

    const seeded = await seedStuckState();
    try {
      const found = await served.call('POST', '/tools/detect/invoke', { stuck_minutes: 60 });
      expect(found.status).toBe(200);
      expect(found.body).toMatchObject({ action: 'detect', severity: 'critical', data: { thresholds: { stuck_minutes: 60 } } });
      expect(ids(found.body.data.checks.stuck_executions.items, 'execution_id')).toEqual([seeded.executionId]);
    } finally {
      await seeded.remove();
    }
  });

  it('identical invocations while one runs share it: one detection run on the server, not two', async () => {
    const [a, b] = await Promise.all([served.call('POST', '/tools/detect/invoke', { limit: 5 }), served.call('POST', '/tools/detect/invoke', { limit: 5 })]);
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    const c = await served.call('POST', '/tools/detect/invoke', { limit: 5 });
    expect(c.body.data.checks.stuck_executions.execution_id).not.toBe(a.body.data.checks.stuck_executions.execution_id);
  });

  it('bad arguments are 400 naming the field, an unknown tool 404; nothing runs', async () => {
    const before = (await http(svc.url, 'GET', '/api/executions?path=doctor/stuck_executions&limit=500')).body.count;
    const bad = await served.call('POST', '/tools/detect/invoke', { stuck_minutes: -5, color: 'red' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail.errors).toEqual(expect.arrayContaining(['stuck_minutes: must be > 0', 'color: unknown argument']));
    expect((await served.call('POST', '/tools/detect/invoke', '{not json', { 'content-type': 'application/json' })).status).toBe(400);
    expect((await served.call('POST', '/tools/detect/invoke', [1, 2])).status).toBe(400);
    expect((await served.call('POST', '/tools/cure/invoke', {})).status).toBe(404);
    expect((await http(svc.url, 'GET', '/api/executions?path=doctor/stuck_executions&limit=500')).body.count).toBe(before);
  });

  it('a server that went away: severity error, HTTP 502', async () => {
    const elsewhere = await serveDoctor(`http://127.0.0.1:${await freePort()}`);
    try {
      const r = await elsewhere.call('POST', '/tools/reachability/invoke', {});
      expect(r.status).toBe(502);
      expect(r.body).toMatchObject({ action: 'reachability', severity: 'error', data: { failure: 'unreachable' } });
    } finally {
      await elsewhere.stop();
    }
  });
});

describe('svc doctor detect where no worker can run its playbooks', () => {
  it('exit 3 naming why, its own executions cancelled; a worker allowed the service database runs them', async () => {
    await withOwnServer('server', {}, async (server, own) => {
      const none = await runDoctor(['detect', '--server', server.url, '--json', '--timeout-seconds', '2']);
      expect(none.code).toBe(3);
      const o = none.json();
      expect(o).toMatchObject({ severity: 'error' });
      expect(o.data.summary).toContain('no result within 2 s');
      expect(o.data.next_steps.join('\n')).toContain('/api/worker/pools');
      for (const name of CHECKS) {
        const ex = await http(server.url, 'GET', `/api/executions/${o.data.checks[name].execution_id}`);
        expect(ex.body.status, `${name}: left running, it would look stuck itself`).toBe('cancelled');
      }

      // A `svc worker` that cannot reach the service database fails them, saying so.
      await withWorker(server.url, {}, async () => {
        const failed = await runDoctor(['detect', '--server', server.url, '--json', '--timeout-seconds', '20']);
        expect(failed.code).toBe(3);
        expect(failed.json().data.summary).toMatch(/needs a worker that can read the service database .*\(stuck_executions, dead_worker_claims, stranded_pending_commands, stale_worker_pools\)/);
      });
      await withWorker(server.url, { SVC_ALLOW_SERVICE_DB_TASKS: 'true', SVC_DATABASE_URL: own.url }, async () => {
        const run = await runDoctor(['detect', '--server', server.url, '--json', '--timeout-seconds', '20']);
        // The first pool deregistered (stopped) when it drained: not a silent pool, nothing to report.
        expect(run.code, run.stdout + run.stderr).toBe(0);
      });
    });
  });
});

describe('svc doctor against a server that checks callers (SVC_AUTH=token)', () => {
  it('sends SVC_API_TOKEN: refused without one (exit 3), detect runs with an operator token', async () => {
    await withOwnServer('start', { SVC_AUTH: 'token' }, async (server, own) => {
      const db = new pg.Client({ connectionString: own.url });
      await db.connect();
      const [operator, admin] = [await createApiToken(db, 'doctor-operator', 'operator'), await createApiToken(db, 'doctor-admin', 'admin')];
      await db.end();

      const refused = await runDoctor(['detect', '--server', server.url, '--json']);
      expect(refused.code).toBe(3);
      expect(refused.json()).toMatchObject({ severity: 'error', data: { failure: 'refused' } });
      expect(refused.json().data.next_steps.join(' ')).toContain('SVC_API_TOKEN');
      const detected = await runDoctor(['detect', '--server', server.url, '--json'], { SVC_API_TOKEN: operator });
      expect(detected.code, detected.stdout + detected.stderr).toBe(0);
      // Health is public: reachability needs no token.
      expect((await runDoctor(['reachability', '--server', server.url])).code).toBe(0);
      // The nudge is admin's; a server without it answers 404 to anyone (a no-op).
      if ((await http(server.url, 'POST', SWEEP, {}, { authorization: `Bearer ${admin}` })).status !== 404) {
        expect((await runDoctor(['repair', '--server', server.url, '--json'], { SVC_API_TOKEN: operator })).json()).toMatchObject({ data: { failure: 'refused' } });
        expect((await runDoctor(['repair', '--server', server.url], { SVC_API_TOKEN: admin })).code).toBe(0);
      } else {
        expect((await runDoctor(['repair', '--server', server.url, '--json'], { SVC_API_TOKEN: operator })).json()).toMatchObject({ data: { result: 'no_op' } });
      }
    });
  });
});

describe('the reaper nudge end to end (runs once the server has POST /api/admin/command_reaper/sweep)', () => {
  it('repair republishes a command held by a dead worker; a live worker runs it and the execution completes', async () => {
    // A server without in-process workers, so the test's "ghost" pool can hold the command.
    const reaper = {
      SVC_COMMAND_REAPER_ENABLED: 'true',
      SVC_COMMAND_REAPER_INTERVAL_SECONDS: '3600', // only the nudge sweeps
      SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '2',
    };
    await withOwnServer('server', reaper, async (server) => {
      const api = executionApi(server.url);
      await api.register(NOOP_PLAYBOOK('seeded/nudge'));
      expect((await http(server.url, 'POST', '/api/worker/pool/register', { name: 'ghost', capacity: 1 }, asWorker)).status).toBe(200);
      const executionId = await api.run('seeded/nudge');
      const claimed = await until('the ghost claims the command', async () => {
        const r = await http(server.url, 'POST', '/api/worker/claim', { worker_id: 'ghost', max: 1, wait_ms: 1000 }, asWorker);
        return r.body.commands?.length ? r.body.commands[0] : undefined;
      });
      expect(claimed.execution_id).toBe(executionId);
      await withWorker(server.url, {}, async () => {
        await new Promise((r) => setTimeout(r, 2_500)); // the ghost's heartbeat is now stale
        const run = await runDoctor(['repair', '--server', server.url, '--json']); // SVC_AUTH=none: anyone on loopback is admin
        expect(run.code, run.stdout + run.stderr).toBe(0);
        expect(run.json()).toMatchObject({ severity: 'ok', data: { result: 'swept' } });
        expect(run.json().data.republished).toBeGreaterThanOrEqual(1);
        expect(await api.wait(executionId, 30_000)).toMatchObject({ status: 'completed' });
      });
    });
  });
});

describe('svc doctor on a default svc start (embedded PostgreSQL, no configuration)', () => {
  it('detect runs its read-only playbooks through the reader role: exit 0', { timeout: 180_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-doctor-'));
    await chmod(dir, 0o755); // as root, PostgreSQL runs as another user that must reach it
    let server: Server | undefined;
    try {
      server = await startSvc('start', { SVC_DATA_DIR: join(dir, 'data') });
      const run = await runDoctor(['detect', '--server', server.url, '--json']);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.json()).toMatchObject({ severity: 'ok' });
    } finally {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
