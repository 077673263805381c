// The command reaper with real processes: `svc server` and `svc worker` processes on one
// PostgreSQL, workers killed with SIGKILL or paused with SIGSTOP, two servers on one database.
import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { executionApi } from '../../helpers/execution-api.ts';
import { heldPlaybook, ServerProcesses } from '../../helpers/server-processes.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

// Sweeps every second; a worker silent for 5 s counts as gone. A busy worker beats every 2 s
// (BUSY_HEARTBEAT_INTERVAL_MS), so 5 s leaves room for a loaded machine.
const REAPER_ENV = { SVC_COMMAND_REAPER_INTERVAL_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '5' };

let processes: ServerProcesses;
let db: pg.Client;
let dir: string;

beforeAll(async () => {
  processes = await ServerProcesses.open(REAPER_ENV);
  ({ db, dir } = processes);
});
// Each test's processes end with it: servers left running would share the reaper's cadence.
afterEach(async () => processes.stopAll());
afterAll(async () => processes?.close());

const startServer = async () => (await processes.server()).base;
const startWorker = (base: string, concurrency: number) => processes.worker(base, concurrency);

const held = async (workerName: string): Promise<{ command_id: number; status: string }[]> =>
  (await db.query(`SELECT command_id, status FROM core.command WHERE worker_id = $1 AND status IN ('CLAIMED', 'RUNNING') ORDER BY command_id`, [workerName])).rows;

/** The command.completed events in the log (a report sent again is stored once: no late one of the same attempt), per command. */
function completionsPerCommand(events: Json[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of events) {
    if (e.event_type !== 'command.completed') continue;
    out.set(e.command_id, (out.get(e.command_id) ?? 0) + 1);
  }
  return out;
}

async function metric(base: string, line: RegExp): Promise<number> {
  const text = (await http(base, 'GET', '/metrics')).body as string;
  return Number(line.exec(text)?.[1] ?? 0);
}

describe('command reaper, real processes', () => {
  it('a worker killed while running one command and holding another: another worker takes both over (attempt 2) and every execution completes once', async () => {
    const base = await startServer();
    const api = executionApi(base);
    const hold = join(dir, 'hold');
    await writeFile(hold, '');
    await api.register(heldPlaybook('recovery/held', hold, processes.stopFile));
    await api.register('apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: quick, path: recovery/quick }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n');
    const a = await startWorker(base, 1);
    // Quick commands first: the pool then prefetches (holds a second command beside the running one).
    for (let i = 0; i < 4; i++) expect((await api.wait(await api.run('recovery/quick'))).status).toBe('completed');
    const ids: number[] = [];
    for (let n = 1; n <= 3; n++) ids.push(await api.run('recovery/held', { n }));
    const taken = await until('worker A to hold two commands', async () => ((await held(a.name)).length === 2 ? held(a.name) : undefined));
    await a.kill();
    await unlink(hold);

    const b = await startWorker(base, 4);
    const t0 = Date.now();
    for (const id of ids) expect((await api.wait(id, 30_000)).status).toBe('completed');
    const recoveredMs = Date.now() - t0;
    for (const c of taken) {
      const row = (await db.query(`SELECT status, attempt, worker_id FROM core.command WHERE command_id = $1`, [c.command_id])).rows[0];
      expect(row).toEqual({ status: 'COMPLETED', attempt: 2, worker_id: b.name });
    }
    for (const [i, id] of ids.entries()) {
      const events = await api.events(id);
      const [commandId] = (await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id])).rows.map((r) => r.command_id);
      expect(completionsPerCommand(events)).toEqual(new Map([[commandId, 1]]));
      expect((await http(base, 'GET', `/api/executions/${id}`)).body.result.stdout).toBe(`done ${i + 1}\n`);
    }
    expect(await metric(base, /^svc_command_reaper_republished_total\{reason="worker_stale"\} (\d+)$/m)).toBeGreaterThanOrEqual(2);
    // A silent worker is noticed after SVC_COMMAND_REAPER_WORKER_STALE_SECONDS, then at the next sweep.
    expect(recoveredMs).toBeLessThan(20_000);
    await b.stop();
  });

  it('a worker paused past the stale threshold: the re-run\'s result stands, its own report is refused, the log shows both attempts', async () => {
    const base = await startServer();
    const api = executionApi(base);
    const mark = join(dir, 'paused-mark');
    await api.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: once, path: recovery/once }
workflow:
  - step: start
    tool:
      - name: run
        kind: shell
        env: { MARK: "${mark}" }
        command: 'if [ -e "$MARK" ]; then echo second; else touch "$MARK"; sleep 1; echo first; fi'
`);
    // The task marks its first attempt in a host file: unsandboxed (a sandboxed task writes only its home).
    const c = await processes.worker(base, 1, { SVC_SHELL_SANDBOX: 'off' });
    const id = await api.run('recovery/once');
    await until('the first attempt to start', async () => {
      try {
        await import('node:fs/promises').then((fs) => fs.access(mark));
        return true;
      } catch {
        return undefined;
      }
    });
    process.kill(c.pid, 'SIGSTOP');
    let resumed = false;
    try {
      const d = await processes.worker(base, 1, { SVC_SHELL_SANDBOX: 'off' });
      const done = await api.wait(id, 30_000);
      expect(done).toMatchObject({ status: 'completed', result: { stdout: 'second\n' } });
      process.kill(c.pid, 'SIGCONT');
      resumed = true;
      // The paused worker wakes up with its (first) result: refused as a stale claim, recorded as a refusal.
      const events = await until('the first attempt\'s report', async () => {
        const ev = await api.events(id);
        return ev.some((e: Json) => e.context?.refused === 'stale_claim' && e.event_type === 'command.refused' && e.context.reported === 'command.completed') ? ev : undefined;
      }, 30_000).catch(async (err: unknown) => {
        // Rare under load: what the log and the paused worker hold says which way it went.
        const seen = (await api.events(id)).map((e: Json) => ({ type: e.event_type, worker: e.worker_id, context: e.context, error: e.error }));
        throw new Error(`${String(err)}\nevents: ${JSON.stringify(seen)}\nworker ${c.name} said:\n${c.output().slice(-4_000)}`);
      });
      expect((await http(base, 'GET', `/api/executions/${id}`)).body).toMatchObject({ status: 'completed', result: { stdout: 'second\n' } });
      // One command.completed in the log; the first attempt's is a refusal (with what it reported).
      const completions = events.filter((e: Json) => e.event_type === 'command.completed' || (e.event_type === 'command.refused' && e.context.reported === 'command.completed'));
      expect(completions.map((e: Json) => ({ type: e.event_type, worker: e.worker_id, refused: e.context.refused ?? null, stdout: e.result.tasks.run.data.stdout }))).toEqual([
        { type: 'command.completed', worker: d.name, refused: null, stdout: 'second\n' },
        { type: 'command.refused', worker: c.name, refused: 'stale_claim', stdout: 'first\n' },
      ]);
      expect(completions[1].context).toMatchObject({ attempt: 1, command_attempt: 2 });
      expect(events.find((e: Json) => e.event_type === 'command.claimed')?.context).toMatchObject({ attempt: 2, worker_id: d.name });
      expect(completionsPerCommand(events).size).toBe(1);
      await d.stop();
      expect(await c.stop()).toBe(0);
    } finally {
      if (!resumed) process.kill(c.pid, 'SIGCONT');
    }
  });

  it('two servers on one database: one sweep at a time, about one per interval between them; the nudge answers 409 while another holds the lease', async () => {
    const [s1, s2] = await Promise.all([startServer(), startServer()]);
    const timerSweeps = async () =>
      (await Promise.all([s1, s2].map((s) => metric(s, /^svc_command_reaper_sweeps_total\{trigger="timer"\} (\d+)$/m)))).reduce((a, b) => a + b, 0);
    const before = await timerSweeps();
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 6_000));
    const swept = (await timerSweeps()) - before;
    const seconds = (Date.now() - t0) / 1000;
    // Each server ticks every second; the lease lets one sweep through per interval between them.
    expect(swept).toBeGreaterThanOrEqual(Math.floor(seconds / 2));
    expect(swept).toBeLessThanOrEqual(Math.ceil(seconds / 0.9) + 1);

    // A sweep in progress elsewhere (here: a holder that died mid-sweep): both servers answer 409.
    await db.query(`UPDATE core.runtime SET status = 'held', holder = 'server-x', lease_expires_at = now() + interval '3 seconds' WHERE kind = 'lease' AND name = 'command_reaper'`);
    for (const s of [s1, s2]) {
      const r = await http(s, 'POST', '/api/admin/command_reaper/sweep');
      expect(r.status).toBe(409);
      expect(r.body.detail).toMatchObject({ code: 'sweep_in_progress' });
    }
    const ok = await until('the lease to expire', async () => {
      const r = await http(s1, 'POST', '/api/admin/command_reaper/sweep');
      return r.status === 200 ? r.body : undefined;
    }, 15_000, 200);
    expect(ok).toMatchObject({ status: 'ok', scanned: expect.any(Number), republished: expect.any(Number) });
    // Nudges racing on both servers: each one either sweeps or is told another sweep holds the lease.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => http(i % 2 ? s1 : s2, 'POST', '/api/admin/command_reaper/sweep')));
    for (const r of answers) {
      if (r.status === 409) expect(r.body.detail.code).toBe('sweep_in_progress');
      else expect(r.status).toBe(200);
    }
  });
});
