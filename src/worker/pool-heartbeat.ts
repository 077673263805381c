import type { Logger } from '../log.ts';
import type { HeartbeatAnswer, HeartbeatRequest } from '../protocol.ts';
import { stopNamedCommands } from './heartbeat-stops.ts';
import { ServerError, type ServerClient } from './server-client.ts';

export const POOL_HEARTBEAT_INTERVAL_MS = 10_000;
// While commands run, heartbeats are more frequent: their answer names cancelled commands to stop.
export const BUSY_HEARTBEAT_INTERVAL_MS = 2_000;

export type PoolHeartbeatOptions = {
  client: ServerClient;
  name: string;
  log: Logger;
  /** Claimed commands (queued or running) by id: the ones a beat's answer names stop. */
  commands: ReadonlyMap<number, AbortController>;
  /** Finished commands whose report is not answered yet: still the pool's. */
  unreported: ReadonlySet<number>;
  draining: () => boolean;
  /** Registers the pool again (a beat answered 409 or 404). */
  register: () => Promise<void>;
  idleIntervalMs?: number;
  busyIntervalMs?: number;
};

/**
 * A pool's heartbeat: the next beat is due a fixed interval after the last one was sent, so
 * however often the pool turns busy or idle, a beat is never postponed past that interval. The
 * answer stops the commands it names (cancelled, superseded).
 */
export class PoolHeartbeat {
  readonly #opts: PoolHeartbeatOptions;
  #on = false;
  #timer: NodeJS.Timeout | undefined;
  #dueAt = 0;
  #beating: Promise<void> | undefined;
  #lastBeatAt = 0;

  constructor(opts: PoolHeartbeatOptions) {
    this.#opts = opts;
  }

  /** Starts beating; registering just now counts as the first beat (it sets heartbeat_at). */
  start(): void {
    this.#lastBeatAt = performance.now();
    this.#on = true;
    this.schedule();
  }

  /** Stops beating; resolves when a beat still in flight is answered (or failed). */
  stop(): Promise<void> {
    this.#on = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return Promise.resolve(this.#beating);
  }

  get on(): boolean {
    return this.#on;
  }

  /**
   * (Re)arms the timer for `last beat + interval`, where the interval depends on whether commands
   * run. Only ever moves the timer earlier, so calling it on every launch is cheap and cannot
   * starve the heartbeat (restarting the timer on each launch did).
   */
  schedule(): void {
    if (!this.#on || this.#beating) return;
    const dueAt = this.#lastBeatAt + this.#intervalMs();
    if (this.#timer && this.#dueAt <= dueAt) return;
    clearTimeout(this.#timer);
    this.#dueAt = dueAt;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#lastBeatAt = performance.now();
      this.#beating = this.#beat().finally(() => {
        this.#beating = undefined;
        this.schedule();
      });
    }, Math.max(0, dueAt - performance.now()));
    this.#timer.unref();
  }

  /** One beat after the one in flight, if any: its answer reflects everything up to now. */
  beatAfterInFlight(): Promise<void> {
    return Promise.resolve(this.#beating).then(() => this.#beat());
  }

  #intervalMs(): number {
    return this.#opts.commands.size
      ? (this.#opts.busyIntervalMs ?? BUSY_HEARTBEAT_INTERVAL_MS)
      : (this.#opts.idleIntervalMs ?? POOL_HEARTBEAT_INTERVAL_MS);
  }

  async #beat(): Promise<void> {
    const { client, name, log, commands, unreported, draining } = this.#opts;
    try {
      const res = await client.request<Partial<HeartbeatAnswer>>('POST', '/api/worker/pool/heartbeat', {
        name,
        status: draining() ? 'draining' : 'ready',
        // Every command the pool holds: one it claimed and no longer lists counts as lost
        // (orphaned) on the server, and another worker may take it over.
        running: [...commands.keys(), ...unreported],
      } satisfies HeartbeatRequest);
      stopNamedCommands(res, commands, log);
    } catch (err) {
      if (err instanceof ServerError && (err.status === 409 || err.status === 404) && !draining()) {
        // The pool was marked stopped (deregistered, 409) or forgotten after a long silence (404:
        // src/periodic/worker-pool-sweep.ts) while we still run: register again.
        log.warn({ err: err.message }, 'worker pool was stopped or forgotten on the server; registering again');
        await this.#opts.register().catch((e: unknown) => log.warn({ err: String(e) }, 'worker re-registration failed'));
        return;
      }
      log.warn({ err: String(err) }, 'worker heartbeat failed');
    }
  }
}
