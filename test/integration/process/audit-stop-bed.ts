// The bed of the audit-stop-* tests: a PostgreSQL of the file's own (it may be SIGSTOPped), two
// `svc server`s and two `svc worker`s (one on each) on it, and a real HTTP target counting the hits
// of each execution. load() keeps starts going while a fault is on; settled() checks afterwards
// that no accepted work was lost, stranded or done twice.
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { startEmbedded, type EmbeddedDatabase } from '../../../src/db/embedded.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, waitForHealth, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

// A stranded command is let go after 5 s of its worker's silence, not the production minute.
const RECOVERY = {
  SVC_COMMAND_REAPER_INTERVAL_SECONDS: '1',
  SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '5',
  SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS: '2',
  SVC_AUTO_RESUME_MIN_STALE_SECONDS: '3600',
};
/** Longest a client waits for an answer before it counts as a hang (a server answers within 15 s). */
export const HANG_MS = 20_000;

const playbook = (path: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { target: "" }
workflow:
  - step: s1
    tool: { name: t, kind: shell, command: "sleep 0.2" }
    next: s2
  - step: s2
    tool: { name: t, kind: noop }
    next: s3
  - step: s3
    tool: { name: t, kind: http, method: GET, url: "{{ workload.target }}/echo?e={{ execution.id }}" }
    next: s4
  - step: s4
    tool: { name: t, kind: shell, command: "sleep 0.2" }
`;

export type Answer = { status: number | 'hung' | 'refused'; retryAfter: string | null; ms: number; server: number };

export class StopBed {
  dir = '';
  pgDb!: EmbeddedDatabase;
  db!: pg.Client;
  target!: HttpTarget;
  servers: { base: string; proc: SvcProcess }[] = [];
  workers: WorkerProcess[] = [];

  async open(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'svc-stop-pg-'));
    await chmod(this.dir, 0o755);
    this.pgDb = await startEmbedded(this.dir);
    this.db = new pg.Client({ connectionString: this.pgDb.url });
    await this.db.connect();
    this.target = await startHttpTarget();
    const env = { SVC_DATABASE_URL: this.pgDb.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_HOST: '127.0.0.1', ...RECOVERY };
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const proc = spawnSvc(['server'], { ...env, SVC_PORT: String(port) });
      this.servers.push({ base: `http://127.0.0.1:${port}`, proc });
      await waitForHealth(`http://127.0.0.1:${port}/api/health`, 30_000);
    }
    for (const s of this.servers) this.workers.push(await startWorkerProcess(s.base, { concurrency: 4 }));
  }

  /** Another worker on the first server. */
  worker0Like(): Promise<WorkerProcess> {
    return startWorkerProcess(this.servers[0].base, { concurrency: 4 });
  }

  async close(): Promise<void> {
    for (const w of this.workers) await w.kill().catch(() => {});
    for (const s of this.servers) {
      s.proc.kill('SIGCONT');
      s.proc.kill('SIGTERM');
      await withTimeout(s.proc.exited, 20_000, 'server stop').catch(() => s.proc.kill('SIGKILL'));
    }
    await this.target?.close();
    await this.db?.end().catch(() => {});
    await this.pgDb?.stop();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  /** Registers the playbook at `path`. */
  async register(path: string): Promise<void> {
    const r = await http(this.servers[0].base, 'POST', '/api/catalog/playbook', { content: playbook(path) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }

  /** SIGSTOPs PostgreSQL, its postmaster and every process it forked; their pids (to SIGCONT). */
  async freezePostgres(): Promise<number[]> {
    const postmaster = Number((await readFile(join(this.pgDb.dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    // Stopped first: a backend it forks while /proc is read (a pool's new connection) would be
    // missed and go on answering (health read 200 through a stop on a loaded machine).
    process.kill(postmaster, 'SIGSTOP');
    const pids = [postmaster];
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) pids.push(Number(entry));
    }
    for (const pid of pids) signalIfThere(pid, 'SIGSTOP');
    return pids;
  }

  /**
   * SIGCONTs what freezePostgres stopped: its children first, then the postmaster, which going on
   * first reaps a child that had exited (a backend ending as the stop came), whose pid is then gone.
   */
  thawPostgres(pids: readonly number[]): void {
    for (const pid of [...pids].reverse()) signalIfThere(pid, 'SIGCONT');
  }

  /** One start on server `i`, with a key, sent again after a 503 as `svc run` does; its answers. */
  async start(path: string, i: number, answers: Answer[]): Promise<number | undefined> {
    const key = randomUUID();
    for (let tries = 0; tries < 20; tries++) {
      const t0 = Date.now();
      let res: Response;
      try {
        res = await fetch(this.servers[i].base + '/api/run/playbook', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ path, payload: { target: this.target.url } }),
          signal: AbortSignal.timeout(HANG_MS),
        });
      } catch (err) {
        answers.push({ status: err instanceof DOMException ? 'hung' : 'refused', retryAfter: null, ms: Date.now() - t0, server: i });
        continue;
      }
      const body: Json = await res.json().catch(() => null);
      answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), ms: Date.now() - t0, server: i });
      if (res.status === 200) return body.execution_id;
      if (res.status !== 503) throw new Error(`start answered ${res.status}: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
    }
    return undefined;
  }

  /**
   * Starts `count` executions of `path`, one every `everyMs`, on the servers `on` (in turn); each is
   * sent until accepted. Resolves with the accepted ids and every answer.
   */
  async load(path: string, count: number, everyMs: number, on: number[]): Promise<{ ids: number[]; answers: Answer[] }> {
    const answers: Answer[] = [];
    const starts: Promise<number | undefined>[] = [];
    for (let n = 0; n < count; n++) {
      starts.push(this.start(path, on[n % on.length], answers));
      await new Promise((r) => setTimeout(r, everyMs));
    }
    const ids = (await Promise.all(starts)).filter((id): id is number => id !== undefined);
    return { ids, answers };
  }

  /**
   * Every execution of `path` finished completed (the accepted `ids` among them); no gap in any
   * log; each step completed once; the target hit once per execution, or as many times as its s3
   * command was attempted when a reaped claim ran twice. Returns those reaped-twice hits.
   */
  async settled(path: string, ids: number[], timeoutMs = 90_000): Promise<{ executions: number; doubleHits: number }> {
    await until('every execution finished', async () => {
      const { rows } = await this.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE path = $1 AND finished_at IS NULL`, [path]);
      return rows[0].n === 0;
    }, timeoutMs, 500);
    const { rows: execs } = await this.db.query(`SELECT execution_id, status, last_event_id FROM core.execution WHERE path = $1 ORDER BY 1`, [path]);
    const stored = execs.map((e) => Number(e.execution_id));
    for (const id of ids) expect(stored).toContain(id);
    expect(execs.filter((e) => e.status !== 'completed'), 'every execution completed').toEqual([]);
    const { rows: gaps } = await this.db.query(
      `SELECT e.execution_id FROM core.execution e JOIN core.event v USING (execution_id)
        WHERE e.path = $1 GROUP BY e.execution_id, e.last_event_id
       HAVING count(*) <> e.last_event_id OR max(v.event_id) <> e.last_event_id OR min(v.event_id) <> 1`,
      [path],
    );
    expect(gaps, 'no gap in any event log').toEqual([]);
    const { rows: done } = await this.db.query(
      `SELECT v.execution_id, v.step, count(*)::int AS n FROM core.event v JOIN core.execution e USING (execution_id)
        WHERE e.path = $1 AND v.event_type = 'command.completed'
        GROUP BY 1, 2`,
      [path],
    );
    expect(done.filter((d) => d.n !== 1), 'each command completed once').toEqual([]);
    expect(done.length, 'four steps completed per execution').toBe(4 * execs.length);
    // Hits of the target per execution against the attempts of its s3 command.
    const hits = new Map<number, number>();
    for (const r of this.target.requests) {
      const e = Number(r.query.e);
      hits.set(e, (hits.get(e) ?? 0) + 1);
    }
    const { rows: s3 } = await this.db.query(
      `SELECT c.execution_id, c.attempt FROM core.command c JOIN core.execution e USING (execution_id) WHERE e.path = $1 AND c.step = 's3'`,
      [path],
    );
    let doubleHits = 0;
    for (const c of s3) {
      const n = hits.get(Number(c.execution_id)) ?? 0;
      expect(n, `execution ${c.execution_id}: the target hit once per attempt of s3 at most, at least once`).toBeGreaterThanOrEqual(1);
      expect(n, `execution ${c.execution_id}: s3 attempt ${c.attempt}`).toBeLessThanOrEqual(Number(c.attempt));
      if (n > 1) doubleHits++;
    }
    return { executions: execs.length, doubleHits };
  }

  /** The servers' output holds no stack trace and no 500. */
  serverLogsClean(): void {
    for (const [i, s] of this.servers.entries()) {
      const out = s.proc.output();
      expect(out, `server ${i}: no stack trace`).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
      expect(out, `server ${i}: no 500`).not.toMatch(/"statusCode":500|internal error/);
    }
  }
}

/** Sends `signal` to `pid`; a process that has ended meanwhile (ESRCH) is no error. */
function signalIfThere(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'ESRCH')) throw err;
  }
}
