// `svc server` and `svc worker` processes of one test file, on one database, ended after each test.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { spawnSvc, waitForHealth, withTimeout, type SvcProcess } from './process.ts';
import { startWorkerProcess, type WorkerProcess } from './worker-process.ts';

export type ServerProcess = { base: string; proc: SvcProcess };

/**
 * A test file's bed: a fresh database (with a client on it), a temporary directory, and the
 * server and worker processes its tests start, all servers on that database with one key.
 */
export class ServerProcesses {
  readonly database: TestDatabase;
  readonly db: pg.Client;
  /** Files the tests' shell tasks wait on; `stop` in it ends every held task (see heldPlaybook). */
  readonly dir: string;
  readonly #env: Record<string, string>;
  #servers: SvcProcess[] = [];
  #workers: WorkerProcess[] = [];

  private constructor(database: TestDatabase, db: pg.Client, dir: string, env: Record<string, string>) {
    this.database = database;
    this.db = db;
    this.dir = dir;
    // A 10 s batch accept, as startTestApp gives: a loaded CI machine can pass the 0.25 s default.
    this.#env = { SVC_DATABASE_URL: database.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '10', ...env };
  }

  /** `env`: added to every server's environment (reaper settings…). */
  static async open(env: Record<string, string>): Promise<ServerProcesses> {
    const database = await createTestDatabase();
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const dir = await mkdtemp(join(tmpdir(), 'svc-processes-'));
    // A root worker runs each sandboxed task as an unprivileged user of its own: it must be able to enter the directory.
    await chmod(dir, 0o755);
    return new ServerProcesses(database, db, dir, env);
  }

  /** The file whose presence ends every held shell task (heldPlaybook). */
  get stopFile(): string {
    return join(this.dir, 'stop');
  }

  /** Starts `svc server` with `env` added, on `port` (a free one by default); resolves once it is healthy. */
  async server(env: Record<string, string> = {}, port?: number): Promise<ServerProcess> {
    const p = port ?? (await freePort());
    const proc = spawnSvc(['server'], { ...this.#env, SVC_PORT: String(p), SVC_HOST: '127.0.0.1', ...env });
    this.#servers.push(proc);
    const base = `http://127.0.0.1:${p}`;
    await waitForHealth(`${base}/api/health`, 30_000);
    return { base, proc };
  }

  /** Starts `svc worker` against `base` with `concurrency` slots (and `env` added to its own). */
  async worker(base: string, concurrency = 1, env: Record<string, string> = {}): Promise<WorkerProcess> {
    // Held tasks test for files in this directory: the shell sandbox lets them read it, nothing more.
    const w = await startWorkerProcess(base, { concurrency, env: { SVC_SHELL_SANDBOX_BINDS: this.dir, ...env } });
    this.#workers.push(w);
    return w;
  }

  /** Stops every worker started so far (SIGTERM: each drains and deregisters), the servers left running (for afterEach of tests that share them). */
  async stopWorkers(): Promise<void> {
    for (const w of this.#workers.splice(0)) await w.stop().catch(() => w.kill());
  }

  /** Kills every worker and stops every server started so far (for afterEach). */
  async stopAll(): Promise<void> {
    for (const w of this.#workers.splice(0)) await w.kill().catch(() => {});
    for (const s of this.#servers.splice(0)) {
      if (s.proc.exitCode === null && s.proc.signalCode === null) s.kill('SIGTERM');
      await withTimeout(s.exited, 20_000, 'server stop').catch(() => s.kill('SIGKILL'));
    }
  }

  /** After the last test: releases held shell tasks left by killed workers, drops the database and the directory. */
  async close(): Promise<void> {
    await this.stopAll();
    await writeFile(this.stopFile, '').catch(() => {});
    await this.db.end();
    await this.database.drop();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * A one-step playbook at `path` whose shell task waits while the file `hold` exists (and `stop`
 * does not), then prints `done <workload.n>`: a command that is mid-run for as long as a test
 * wants. The paths reach the shell as environment variables, never in its command text.
 */
export function heldPlaybook(path: string, hold: string, stop: string): string {
  return `
apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: ${path} }
workload: { n: 0 }
workflow:
  - step: start
    tool:
      - name: wait
        kind: shell
        env: { HOLD: "${hold}", STOP: "${stop}", N: "{{ workload.n }}" }
        command: 'while [ -e "$HOLD" ] && [ ! -e "$STOP" ]; do sleep 0.1; done; echo "done $N"'
`;
}
