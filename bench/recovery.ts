// `npm run bench:recovery`: how long an execution waits after its worker dies. A `svc worker`
// process is killed with SIGKILL in the middle of a command; another worker process is up; the
// server's command reaper sweeps every second. Measured per trial from the database's clock:
// kill → command claimed again (attempt 2) → execution completed. Writes bench/recovery-results.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { startService } from '../src/service.ts';
import { openBenchDatabase } from './database.ts';
import { api, closeApiAgent } from './http-client.ts';
import { median, round, sleep } from './stats.ts';

const TRIALS = 5;
const REAPER_INTERVAL_SECONDS = 1;
// How long a silent worker is given before its claims are taken over: the largest part of the
// recovery time, a setting (default 60 s); 5 s is what a deployment that wants fast recovery sets
// (above the 2 s heartbeat of a busy worker). SVC_COMMAND_REAPER_WORKER_STALE_SECONDS overrides it.
const WORKER_STALE_SECONDS = Number(process.env.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS ?? 5);
const WORKER_READY_TIMEOUT_MS = 20_000;
const TRIAL_TIMEOUT_MS = 120_000;
const POLL_MS = 20;
const REPO_ROOT = join(import.meta.dirname, '..');
const RESULTS_FILE = join(import.meta.dirname, 'recovery-results.json');

type Trial = { killToClaimMs: number; claimToCompletedMs: number; killToCompletedMs: number; silentBeforeKillMs: number };

type WorkerProcess = { name: string; child: ChildProcess; exited: Promise<void> };

/** `svc worker` as a child process; resolves once it has registered (its start line names it). */
async function startWorker(serverUrl: string, workerToken: string, holdDir: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['src/cli.ts', 'worker', '--server', serverUrl, '--concurrency', '1'], {
    cwd: REPO_ROOT,
    // The sandboxed task reads the hold file's directory, and nothing else of the host.
    env: { ...process.env, SVC_LOG_LEVEL: 'error', SVC_WORKER_TOKEN: workerToken, SVC_SHELL_SANDBOX_BINDS: holdDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const name = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`worker process did not start: ${stderr}`)), WORKER_READY_TIMEOUT_MS);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^worker (\S+) claiming from/m.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    void exited.then(() => fail(new Error(`worker process exited before it started: ${stderr}`)));
  });
  return { name, child, exited };
}

async function main(): Promise<void> {
  const db = await openBenchDatabase();
  // Its own directory, readable by the per-task user the sandbox runs a root worker's task as.
  const holdDir = await mkdtemp(join(tmpdir(), 'svc-bench-hold-'));
  await chmod(holdDir, 0o755);
  const hold = join(holdDir, 'hold');
  const config = loadConfig({
    SVC_DATABASE_URL: db.url,
    SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SVC_DATA_DIR: join(db.dataDir, 'svc'),
    SVC_PORT: '0',
    SVC_HOST: '127.0.0.1',
    SVC_LOG_LEVEL: 'warn',
    SVC_WORKER_CONCURRENCY: '0',
    SVC_WORKER_TOKEN: randomBytes(32).toString('base64url'),
    SVC_COMMAND_REAPER_INTERVAL_SECONDS: String(REAPER_INTERVAL_SECONDS),
    SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: String(WORKER_STALE_SECONDS),
  });
  const svc = await startService(config, { log: createLogger('warn') });
  const q = svc.deps.db;
  const trials: Trial[] = [];
  try {
    // The command waits while `hold` exists: it is mid-run when its worker is killed, and the
    // re-run (the file gone by then) finishes at once, so what is measured is the recovery.
    await api(svc.url, 'POST', '/api/catalog/playbook', {
      content: `apiVersion: svc/v1
kind: Playbook
metadata: { name: recovery, path: bench/recovery }
workflow:
  - step: start
    tool:
      - { name: wait, kind: shell, env: { HOLD: "${hold}" }, command: 'while [ -e "$HOLD" ]; do sleep 0.05; done; echo done' }
`,
    });
    for (let i = 1; i <= TRIALS; i++) {
      await writeFile(hold, '');
      const victim = await startWorker(svc.url, svc.deps.workerToken, holdDir);
      const { execution_id: id } = await api<{ execution_id: number }>(svc.url, 'POST', '/api/run/playbook', { path: 'bench/recovery' });
      const deadline = Date.now() + TRIAL_TIMEOUT_MS;
      while ((await q.query(`SELECT 1 FROM core.command WHERE execution_id = $1 AND worker_id = $2`, [id, victim.name])).rowCount === 0) {
        if (Date.now() > deadline) throw new Error(`trial ${i}: the worker did not claim the command`);
        await sleep(POLL_MS);
      }
      // Running for a moment, with a heartbeat or two behind it, as a worker that dies in mid-work.
      await sleep(1_000 + Math.random() * 2_000);
      const survivor = await startWorker(svc.url, svc.deps.workerToken, holdDir);
      victim.child.kill('SIGKILL');
      await victim.exited;
      const killedAt = (await q.query<{ t: Date }>(`SELECT clock_timestamp() AS t`)).rows[0].t;
      await rm(hold, { force: true });
      let row: { finished_at: Date | null; claimed_at: Date; attempt: number; beat: Date } | undefined;
      for (;;) {
        row = (
          await q.query<{ finished_at: Date | null; claimed_at: Date; attempt: number; beat: Date }>(
            `SELECT e.finished_at, c.claimed_at, c.attempt, r.heartbeat_at AS beat
               FROM core.execution e JOIN core.command c USING (execution_id) JOIN core.runtime r ON r.kind = 'worker_pool' AND r.name = $2
              WHERE e.execution_id = $1`,
            [id, victim.name],
          )
        ).rows[0];
        if (row?.finished_at) break;
        if (Date.now() > deadline) throw new Error(`trial ${i}: execution ${id} did not complete`);
        await sleep(POLL_MS);
      }
      if (row.attempt !== 2) throw new Error(`trial ${i}: expected the command's second attempt to complete it, got attempt ${row.attempt}`);
      const trial = {
        killToClaimMs: round(row.claimed_at.getTime() - killedAt.getTime(), 0),
        claimToCompletedMs: round(row.finished_at.getTime() - row.claimed_at.getTime(), 0),
        killToCompletedMs: round(row.finished_at.getTime() - killedAt.getTime(), 0),
        silentBeforeKillMs: round(killedAt.getTime() - row.beat.getTime(), 0),
      };
      trials.push(trial);
      process.stderr.write(`[bench:recovery] trial ${i}/${TRIALS}: ${JSON.stringify(trial)}\n`);
      survivor.child.kill('SIGTERM');
      await survivor.exited;
    }
  } finally {
    closeApiAgent();
    await svc.stop();
    await db.stop();
    await rm(holdDir, { recursive: true, force: true });
  }
  const summary = {
    setup: {
      trials: TRIALS,
      reaperIntervalSeconds: REAPER_INTERVAL_SECONDS,
      workerStaleSeconds: WORKER_STALE_SECONDS,
      postgres: `${db.version.split(' on ')[0]} (${db.source})`,
    },
    medianKillToCompletedMs: median(trials.map((t) => t.killToCompletedMs)),
    maxKillToCompletedMs: Math.max(...trials.map((t) => t.killToCompletedMs)),
    medianKillToClaimMs: median(trials.map((t) => t.killToClaimMs)),
    medianClaimToCompletedMs: median(trials.map((t) => t.claimToCompletedMs)),
    trials,
  };
  await writeFile(RESULTS_FILE, JSON.stringify(summary, null, 2) + '\n');
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  process.stdout.write(
    [
      `recovery after a worker SIGKILL (reaper every ${REAPER_INTERVAL_SECONDS} s, worker stale after ${WORKER_STALE_SECONDS} s, ${TRIALS} trials)`,
      `  kill -> execution completed  median ${s(summary.medianKillToCompletedMs)}, max ${s(summary.maxKillToCompletedMs)}`,
      `  kill -> claimed again        median ${s(summary.medianKillToClaimMs)}`,
      `  claimed again -> completed   median ${s(summary.medianClaimToCompletedMs)}`,
      `  (${RESULTS_FILE})`,
    ].join('\n') + '\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:recovery failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
