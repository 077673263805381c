// The one runner of a server's background work (src/periodic/start-periodic.ts starts it all): a
// run at a time per job, the next one an interval after the previous ended, each counted and
// timed (svc_periodic_runs_total, svc_periodic_run_seconds), a failure logged and the next run
// kept. With a lease, one server of many runs the job per interval.
import type { Db } from '../db/db.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { failureLog, type FailureLog } from './failure-log.ts';
import { withLease } from './with-lease.ts';

// Timers drift: a leased run may start this share of the interval early, so that a server's own
// ticks keep the cadence instead of skipping every other one.
const CADENCE_TOLERANCE = 0.1;
const MS_PER_SECOND = 1000;

export type PeriodicDeps = { db: Db; log: Logger; metrics: Metrics };

export type PeriodicSpec = {
  /** Names the job in logs and metrics, and its lease row when it has one. */
  name: string;
  /** From the end of one run to the start of the next. */
  intervalMs: number;
  /** Before the first run (0: at once); one interval when absent. */
  firstDelayMs?: number;
  /**
   * Run under the lease row `name` in core.runtime (held at most `ttlSeconds`), and only when no
   * server took it within the last interval: one run per interval across servers.
   */
  lease?: { ttlSeconds: number };
};

const HOUSEKEEPING_INTERVAL_MS = 10 * 60 * 1000;
const HOUSEKEEPING_FIRST_DELAY_MS = 60_000;
const HOUSEKEEPING_LEASE_TTL_SECONDS = 300;

/**
 * A housekeeping job's spec (expired rows deleted and the like): a minute after start (a start is
 * when a stop signal is most likely to cut the database away under it), then every 10 minutes,
 * on one server of many; its deletes take milliseconds, and a holder that dies blocks the others
 * for the lease's 5 minutes at most.
 */
export function housekeeping(name: string): PeriodicSpec {
  return { name, intervalMs: HOUSEKEEPING_INTERVAL_MS, firstDelayMs: HOUSEKEEPING_FIRST_DELAY_MS, lease: { ttlSeconds: HOUSEKEEPING_LEASE_TTL_SECONDS } };
}

/** One run's work; `signal` aborts when the job is stopped (work that waits should heed it). */
export type PeriodicRun = (signal: AbortSignal) => Promise<unknown>;

export type Periodic = {
  /** No run starts after this; resolves once a run in flight has ended. */
  stop(): Promise<void>;
};

/** Runs `run` every `spec.intervalMs` (unref'd timers, never two at once) until stopped. */
export function every(deps: PeriodicDeps, spec: PeriodicSpec, run: PeriodicRun): Periodic {
  const minGapSeconds = spec.lease ? (spec.intervalMs / MS_PER_SECOND) * (1 - CADENCE_TOLERANCE) : null;
  return schedule(deps, spec, minGapSeconds, run, true);
}

/**
 * Runs `run` once, after `spec.firstDelayMs` (0 when absent): work a server does at start (the
 * same runner, so it is counted, logged and stopped like the rest). A lease has no gap here.
 */
export function once(deps: PeriodicDeps, spec: Omit<PeriodicSpec, 'intervalMs'>, run: PeriodicRun): Periodic {
  return schedule(deps, { ...spec, intervalMs: 0, firstDelayMs: spec.firstDelayMs ?? 0 }, null, run, false);
}

function schedule(deps: PeriodicDeps, spec: PeriodicSpec, minGapSeconds: number | null, run: PeriodicRun, repeat: boolean): Periodic {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const failures = failureLog(deps.log, `periodic ${spec.name}`, { periodic: spec.name });
  const tick = () => {
    running = runOnce(deps, spec, minGapSeconds, run, abort.signal, failures).finally(() => {
      running = undefined;
      if (repeat && !abort.signal.aborted) timer = setTimeout(tick, spec.intervalMs).unref();
    });
  };
  timer = setTimeout(tick, spec.firstDelayMs ?? spec.intervalMs).unref();
  return {
    async stop() {
      abort.abort();
      clearTimeout(timer);
      await running;
    },
  };
}

/** One run, under the lease when the spec has one; never throws. Its failure goes to `failures` (failureLog). */
async function runOnce(deps: PeriodicDeps, spec: PeriodicSpec, minGapSeconds: number | null, run: PeriodicRun, signal: AbortSignal, failures: FailureLog): Promise<void> {
  const t0 = performance.now();
  let outcome: 'ok' | 'skipped' | 'failed';
  try {
    if (spec.lease) {
      const out = await withLease(deps, { name: spec.name, ttlSeconds: spec.lease.ttlSeconds, minGapSeconds }, () => run(signal));
      outcome = out.ran ? 'ok' : 'skipped';
    } else {
      await run(signal);
      outcome = 'ok';
    }
  } catch (err) {
    // A run cut short by stop() did not fail: the server is going away.
    if (signal.aborted) return;
    outcome = 'failed';
    // The message only: a database that went away (a stop during start) is a transient condition
    // here, not a fault with a name and a stack.
    failures.failed(err, `periodic ${spec.name} failed`);
  }
  if (outcome !== 'failed') failures.succeeded();
  deps.metrics.periodicRuns.inc({ name: spec.name, outcome });
  if (outcome !== 'skipped') deps.metrics.periodicRunSeconds.observe({ name: spec.name }, (performance.now() - t0) / MS_PER_SECOND);
}
