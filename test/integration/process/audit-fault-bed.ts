// The bed of the audit-fault-* tests: a PostgreSQL of the file's own (it may be restarted), `svc
// server` processes on it (each may be SIGKILLed and started again on its port), workers, and a
// client that sends a request again after a 503 or a lost answer, with its key, as a sender of
// webhooks or `svc signal` does. Every answer is kept, to check that none was a 500.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { onFreePort, startEmbedded, type EmbeddedDatabase } from '../../../src/db/embedded.ts';
import { http, type Json } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, waitForHealth, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.ts';

/** One answer a request got: its status (or `lost`: the connection broke or no answer came), and Retry-After and the code of a 503. */
export type Answer = { status: number | 'lost'; retryAfter: string | null; code: unknown; body: Json };

/** Longest a client waits for an answer (a server answers within 15 s, even on a hung database). */
const ANSWER_MS = 20_000;

export class FaultBed {
  dir = '';
  pgPort = 0;
  pgDb: EmbeddedDatabase | undefined;
  db!: pg.Pool;
  readonly env: Record<string, string>;
  servers: { base: string; port: number; proc: SvcProcess }[] = [];
  workers: WorkerProcess[] = [];
  /** Every answer the bed's client got. */
  readonly answers: Answer[] = [];

  constructor(env: Record<string, string> = {}) {
    this.env = { SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_HOST: '127.0.0.1', ...env };
  }

  async open(servers: number, workers: number): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'svc-fault-'));
    await chmod(this.dir, 0o755); // as root, PostgreSQL runs as another user that must reach it
    // Another run of the suites beside this one may take the port before PostgreSQL binds it.
    const started = await onFreePort(freePort, (port) => startEmbedded(this.dir, () => {}, { port }));
    this.pgPort = started.port;
    this.pgDb = started.value;
    // A pool: its idle clients are dropped when PostgreSQL restarts, and new ones made after.
    this.db = new pg.Pool({ connectionString: this.pgDb.url, max: 2 });
    this.db.on('error', () => {});
    for (let i = 0; i < servers; i++) await this.startServer(i);
    for (let i = 0; i < workers; i++) this.workers.push(await startWorkerProcess(this.servers[i % servers].base, { concurrency: 4 }));
  }

  /** Starts server `i` (again on its port after a kill), resolving once it is healthy. */
  async startServer(i: number): Promise<void> {
    const port = this.servers[i]?.port ?? (await freePort());
    const proc = spawnSvc(['server'], { ...this.env, SVC_DATABASE_URL: this.pgDb!.url, SVC_PORT: String(port) });
    this.servers[i] = { base: `http://127.0.0.1:${port}`, port, proc };
    // A loaded machine (other suites running) has taken over 30 s to start one.
    await waitForHealth(`http://127.0.0.1:${port}/api/health`, 90_000).catch((err: unknown) => {
      proc.kill('SIGKILL');
      throw new Error(`${String(err)}\n${proc.output()}`);
    });
  }

  /** SIGKILLs server `i` and waits until it is gone. */
  async killServer(i: number): Promise<void> {
    this.servers[i].proc.kill('SIGKILL');
    await withTimeout(this.servers[i].proc.exited, 10_000, `server ${i} exit`);
  }

  async stopPostgres(): Promise<void> {
    await this.pgDb!.stop();
    this.pgDb = undefined;
  }

  async startPostgres(): Promise<void> {
    this.pgDb = await startEmbedded(this.dir, () => {}, { port: this.pgPort });
  }

  async close(): Promise<void> {
    for (const w of this.workers) await w.kill().catch(() => {});
    for (const s of this.servers) {
      if (s.proc.proc.exitCode !== null || s.proc.proc.signalCode !== null) continue;
      s.proc.kill('SIGTERM');
      await withTimeout(s.proc.exited, 20_000, 'server stop').catch(() => s.proc.kill('SIGKILL'));
    }
    await this.db?.end().catch(() => {});
    await this.pgDb?.stop();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  async register(content: string): Promise<void> {
    const r = await http(this.servers[0].base, 'POST', '/api/catalog/playbook', { content });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }

  /** One request, its answer kept; `lost` when the connection broke or no answer came in time. */
  async send(base: string, path: string, body: string, headers: Record<string, string>): Promise<Answer> {
    let answer: Answer;
    try {
      const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(ANSWER_MS) });
      const text = await res.text();
      let parsed: Json = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: kept as text
      }
      const code: unknown = res.status === 503 ? parsed?.detail?.code : undefined;
      answer = { status: res.status, retryAfter: res.headers.get('retry-after'), code, body: parsed };
    } catch {
      answer = { status: 'lost', retryAfter: null, code: undefined, body: null };
    }
    this.answers.push(answer);
    return answer;
  }

  /**
   * Sends the request until an answer other than 503 or a lost one comes, to the bed's servers in
   * turn from `first` (a dead one's refusal counts as lost), pausing `pauseMs` between tries.
   */
  async sendUntilAnswered(first: number, path: string, body: string, headers: Record<string, string>, pauseMs = 100): Promise<Answer> {
    for (let tries = 0; tries < 300; tries++) {
      const s = this.servers[(first + tries) % this.servers.length];
      const a = await this.send(s.base, path, body, headers);
      if (a.status !== 503 && a.status !== 'lost') return a;
      await new Promise((r) => setTimeout(r, pauseMs));
    }
    throw new Error(`${path}: no answer but 503 or lost in 300 tries`);
  }

  /** Every 503 had Retry-After and the database_unavailable code; no answer was a 5xx other than 503. */
  expectNo500(): void {
    const bad = this.answers.filter((a) => typeof a.status === 'number' && a.status >= 500 && (a.status !== 503 || !/^\d+$/.test(a.retryAfter ?? '') || a.code !== 'database_unavailable'));
    expect(bad, JSON.stringify(bad.slice(0, 5))).toEqual([]);
  }

  async count(sql: string, params: unknown[] = []): Promise<number> {
    return Number((await this.db.query<{ n: string }>(sql, params)).rows[0].n);
  }
}
