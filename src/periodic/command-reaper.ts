import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { CommandBus } from '../bus/command-bus.ts';
import type { Config } from '../config.ts';
import { markStrandedClaims, touchStalePending, type StrandedReason } from '../db/command.repo.ts';
import type { Db } from '../db/db.ts';
import { leaseHolder, releaseLease, takeLease } from '../db/runtime.repo.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';

// The reaper runs inside every server on a timer and sweeps under a lease row in core.runtime:
// one sweep at a time across servers, about one per interval, and a holder that dies mid-sweep
// blocks the others only until its lease expires. (pg-boss, the design's job runner, schedules
// by the minute and polls; a nudge must sweep now and say "busy" at once, which takes the lease
// anyway.)
const REAPER_LEASE = 'command_reaper';
/** How long a sweep may hold the lease; sweeps take milliseconds, a dead holder blocks this long. */
const REAPER_LEASE_TTL_SECONDS = 30;
// Timers drift: a timed sweep may start this share of the interval early, so that a server's
// own ticks keep the cadence instead of skipping every other one.
const CADENCE_TOLERANCE = 0.1;

export type ReaperDeps = { db: Db; bus: CommandBus; config: Config; metrics: Metrics; log: Logger };

export type SweepResult = { status: 'ok'; scanned: number; republished: number; by_reason: Partial<Record<StrandedReason, number>> };

/** Another sweep holds the lease. */
export type SweepBusy = { status: 'busy'; holder: string | null; expires_at: Date | null };

const SERVER_ID = `${hostname()}-${process.pid}`;

/**
 * One sweep, under the reaper lease: marks CLAIMED/RUNNING commands whose holder is gone (see
 * markStrandedClaims) so a live worker may claim them again, touches PENDING ones waiting past
 * SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS, at most SVC_COMMAND_REAPER_MAX_PER_RUN in all, and
 * republishes their notification. Never completes, fails or moves a command: the claim policy
 * decides who runs it next. `minGapSeconds`: skip (busy) unless the last sweep started that long ago.
 */
export async function sweepStrandedCommands(deps: ReaperDeps, opts: { trigger: 'timer' | 'nudge'; minGapSeconds: number | null }): Promise<SweepResult | SweepBusy> {
  const c = deps.config;
  const holder = `${SERVER_ID}-${randomUUID().slice(0, 8)}`;
  if (!(await takeLease(deps.db, { name: REAPER_LEASE, holder, ttlSeconds: REAPER_LEASE_TTL_SECONDS, minGapSeconds: opts.minGapSeconds }))) {
    const held = await leaseHolder(deps.db, REAPER_LEASE);
    return { status: 'busy', holder: held?.holder ?? null, expires_at: held?.expires_at ?? null };
  }
  try {
    const max = c.SVC_COMMAND_REAPER_MAX_PER_RUN;
    const claims = await markStrandedClaims(deps.db, {
      staleSeconds: c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS,
      hardTimeoutSeconds: c.SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS,
      max,
    });
    const pending = await touchStalePending(deps.db, { retrySeconds: c.SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS, max: max - claims.stranded.length });
    const byReason: Partial<Record<StrandedReason, number>> = {};
    for (const s of claims.stranded) byReason[s.reason] = (byReason[s.reason] ?? 0) + 1;
    if (pending.republished.length) byReason.pending_stale = pending.republished.length;
    const republished = claims.stranded.length + pending.republished.length;
    if (republished) await deps.bus.publish(republished, claims.stranded.length > 0);
    const scanned = claims.scanned + pending.scanned;
    deps.metrics.reaperSweeps.inc({ trigger: opts.trigger });
    deps.metrics.reaperScanned.inc(scanned);
    for (const [reason, n] of Object.entries(byReason)) deps.metrics.reaperRepublished.inc({ reason }, n);
    if (republished) {
      deps.log.info({ republished, by_reason: byReason, commands: [...claims.stranded.map((s) => s.command_id), ...pending.republished] }, 'command reaper republished stranded commands');
    }
    return { status: 'ok', scanned, republished, by_reason: byReason };
  } finally {
    await releaseLease(deps.db, REAPER_LEASE, holder).catch((err: unknown) => deps.log.warn({ err: String(err) }, 'command reaper could not release its lease; it expires by itself'));
  }
}

/** Sweeps every SVC_COMMAND_REAPER_INTERVAL_SECONDS (first one an interval after start); returns a stop function that waits for a sweep in flight. */
export function startCommandReaper(deps: ReaperDeps): () => Promise<void> {
  const intervalSeconds = deps.config.SVC_COMMAND_REAPER_INTERVAL_SECONDS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const tick = () => {
    running = sweepStrandedCommands(deps, { trigger: 'timer', minGapSeconds: intervalSeconds * (1 - CADENCE_TOLERANCE) })
      .then(() => undefined)
      .catch((err: unknown) => deps.log.warn({ err: String(err) }, 'command reaper sweep failed'))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, intervalSeconds * 1000).unref();
      });
  };
  timer = setTimeout(tick, intervalSeconds * 1000).unref();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
