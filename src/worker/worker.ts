import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { RoutedEvent } from '../../actors/route-events.ts';
import type { PresentedCommand } from '../api/present.ts';
import type { Logger } from '../log.ts';
import { createKeychainResolver } from './keychain-resolver.ts';
import { runCommand, type KeychainResolver } from './run-command.ts';
import { ServerClient, ServerError } from './server-client.ts';

export const POOL_HEARTBEAT_INTERVAL_MS = 10_000;
// While commands run, heartbeats are more frequent: their answer names cancelled commands to stop.
export const BUSY_HEARTBEAT_INTERVAL_MS = 2_000;
export const CLAIM_WAIT_MS = 5_000;
const REPORT_RETRY_MAX_DELAY_MS = 5_000;

export type WorkerOptions = {
  serverUrl: string;
  name?: string;
  concurrency: number;
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
  serviceDatabaseUrl?: string;
  resolveKeychain?: KeychainResolver;
  claimWaitMs?: number;
};

type PendingReport = { events: RoutedEvent[] };

/**
 * A worker pool: claims commands (long poll), runs up to `concurrency` at once, and reports
 * results. Reports that finish while another is in flight are sent together in one request,
 * which also claims that many next commands (claim-ahead), so a busy pool costs about one round
 * trip and one commit per batch of steps.
 */
export class Worker {
  readonly name: string;
  readonly client: ServerClient;
  readonly #opts: WorkerOptions;
  // One per pool: concurrent commands needing the same keychain entry share its token request.
  readonly #resolveKeychain: KeychainResolver;
  #running = 0;
  #stopping = false;
  #stopped: Promise<void> | undefined;
  #abortClaims = new AbortController();
  #abortTasks = new AbortController();
  #slotFreed: (() => void) | undefined;
  #reports: PendingReport[] = [];
  #reporting: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #commands = new Map<number, AbortController>();

  constructor(opts: WorkerOptions) {
    this.#opts = opts;
    this.name = opts.name ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`;
    this.client = new ServerClient(opts.serverUrl);
    this.#resolveKeychain = opts.resolveKeychain ?? createKeychainResolver({ client: this.client, log: opts.log, env: opts.env });
  }

  get running(): number {
    return this.#running;
  }

  /** Registers the pool and starts claiming. */
  async start(): Promise<void> {
    await this.client.request('POST', '/api/worker/pool/register', { name: this.name, capacity: this.#opts.concurrency, labels: { host: hostname(), pid: process.pid } });
    this.#scheduleHeartbeat();
    this.#loop = this.#claimLoop();
  }

  #scheduleHeartbeat(): void {
    const every = this.#commands.size ? BUSY_HEARTBEAT_INTERVAL_MS : POOL_HEARTBEAT_INTERVAL_MS;
    this.#heartbeat = setTimeout(() => {
      this.#beat().finally(() => {
        if (this.#heartbeat) this.#scheduleHeartbeat();
      });
    }, every);
    this.#heartbeat.unref();
  }

  async #beat(): Promise<void> {
    try {
      const res = await this.client.request<{ cancelled?: unknown }>('POST', '/api/worker/pool/heartbeat', {
        name: this.name,
        status: this.#stopping ? 'draining' : 'ready',
        running: [...this.#commands.keys()],
      });
      for (const id of Array.isArray(res.cancelled) ? res.cancelled : []) {
        if (typeof id === 'number') this.#commands.get(id)?.abort();
      }
    } catch (err) {
      this.#opts.log.warn({ err: String(err) }, 'worker heartbeat failed');
    }
  }

  /** Drains: no new claims; running commands finish and report; then deregisters. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true;
      this.#abortClaims.abort();
      this.#slotFreed?.();
      await this.#loop;
      while (this.#running > 0 || this.#reports.length || this.#reporting) await (this.#reporting ?? delay(20));
      clearTimeout(this.#heartbeat);
      this.#heartbeat = undefined;
      await this.client.request('POST', '/api/worker/pool/deregister', { name: this.name }).catch(() => {});
    })();
    return this.#stopped;
  }

  /** Stops at once: running tasks are aborted (used when a drain must not wait). */
  async kill(): Promise<void> {
    this.#abortTasks.abort();
    await this.stop();
  }

  async #claimLoop(): Promise<void> {
    let backoffMs = 100;
    while (!this.#stopping) {
      const free = this.#opts.concurrency - this.#running;
      if (free <= 0) {
        await new Promise<void>((r) => (this.#slotFreed = r));
        continue;
      }
      try {
        const res = await this.client.request<{ commands: PresentedCommand[] }>(
          'POST',
          '/api/worker/claim',
          { worker_id: this.name, max: free, wait_ms: this.#opts.claimWaitMs ?? CLAIM_WAIT_MS },
          this.#abortClaims.signal,
        );
        for (const cmd of res.commands) this.#launch(cmd);
        backoffMs = 100;
      } catch (err) {
        if (this.#stopping) break;
        this.#opts.log.warn({ err: String(err) }, 'claim failed; retrying');
        await delay(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 5_000);
      }
    }
  }

  #launch(cmd: PresentedCommand): void {
    this.#running++;
    const abort = new AbortController();
    this.#commands.set(cmd.command_id, abort);
    if (this.#commands.size === 1 && this.#heartbeat) {
      // Became busy: beat sooner, so a cancel reaches this command within BUSY_HEARTBEAT_INTERVAL_MS.
      clearTimeout(this.#heartbeat);
      this.#scheduleHeartbeat();
    }
    runCommand(cmd, {
      client: this.client,
      workerId: this.name,
      env: this.#opts.env,
      log: this.#opts.log,
      signal: AbortSignal.any([this.#abortTasks.signal, abort.signal]),
      serviceDatabaseUrl: this.#opts.serviceDatabaseUrl,
      resolveKeychain: this.#resolveKeychain,
    })
      .catch((err): RoutedEvent[] => [
        // A bug in the runner must still end the command, or it would wait for the reaper.
        { execution_id: cmd.execution_id, command_id: cmd.command_id, attempt: cmd.attempt, worker_id: this.name, event_type: 'command.failed', error: { message: `worker error: ${err instanceof Error ? err.message : String(err)}`, code: 'worker_error' } },
      ])
      .then((events) => {
        this.#commands.delete(cmd.command_id);
        this.#reports.push({ events });
        this.#flushReports();
      });
  }

  #flushReports(): void {
    if (this.#reporting || !this.#reports.length) return;
    const batch = this.#reports.splice(0);
    this.#reporting = this.#send(batch).finally(() => {
      this.#reporting = undefined;
      this.#flushReports();
    });
  }

  async #send(batch: PendingReport[]): Promise<void> {
    const events = batch.flatMap((r) => r.events);
    let claimed: PresentedCommand[] = [];
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await this.client.request<{ commands: PresentedCommand[] }>('POST', '/api/worker/report', {
          worker_id: this.name,
          events,
          claim: this.#stopping ? 0 : batch.length,
        });
        claimed = res.commands;
        break;
      } catch (err) {
        if (err instanceof ServerError && err.status >= 400 && err.status < 500) {
          this.#opts.log.error({ err: err.message }, 'report refused by the server; dropped');
          break;
        }
        // The server is unreachable or failing: keep the results and try again; they are not lost.
        this.#opts.log.warn({ err: String(err), attempt }, 'report failed; retrying');
        await delay(Math.min(100 * 2 ** attempt, REPORT_RETRY_MAX_DELAY_MS));
      }
    }
    // Each reported command freed a slot; claimed commands take them back.
    this.#running -= batch.length;
    for (const cmd of claimed) this.#launch(cmd);
    if (claimed.length < batch.length) this.#slotFreed?.();
  }
}
