import type { CommandBus } from '../bus/command-bus.ts';
import type { Config } from '../config.ts';
import { claimPolicyOf, markStrandedClaims, releaseKeptSlots, touchStalePending, withdrawPausedClaims, type StrandedReason } from '../db/command.repo.ts';
import type { Db } from '../db/db.ts';
import type { FlowClock } from '../flow/flow-clock.ts';
import { leaseHolder } from '../db/runtime.repo.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { PeriodicSpec } from './every.ts';
import { withLease } from './with-lease.ts';

// The reaper runs inside every server on a timer (src/periodic/start-periodic.ts) and sweeps under
// a lease row in core.runtime: one sweep at a time across servers, about one per interval, and a
// holder that dies mid-sweep blocks the others only until its lease expires. A nudge sweeps now
// under the same lease and says "busy" at once when another sweep holds it.
const REAPER_LEASE = 'command_reaper';
/** How long a sweep may hold the lease; sweeps take milliseconds, a dead holder blocks this long. */
const REAPER_LEASE_TTL_SECONDS = 30;
const MS_PER_SECOND = 1000;

export type ReaperDeps = { db: Db; bus: CommandBus; config: Config; metrics: Metrics; log: Logger; flowClock?: FlowClock };

/**
 * `released`: limit slots of cancelled commands given back (releaseKeptSlots), which a nudge's caller is told of as it is of what was republished;
 * `withdrawn`: dead claims of paused executions given back to the pause (withdrawPausedClaims), for their resume to issue.
 */
export type SweepResult = { status: 'ok'; scanned: number; republished: number; by_reason: Partial<Record<StrandedReason, number>>; released: number; withdrawn: number };

/** Another sweep holds the lease. */
export type SweepBusy = { status: 'busy'; holder: string | null; expires_at: Date | null };

/** The timed sweep: every SVC_COMMAND_REAPER_INTERVAL_SECONDS (first one an interval after start), under the reaper lease. */
export function reaperSchedule(config: Config): PeriodicSpec {
  return { name: REAPER_LEASE, intervalMs: config.SVC_COMMAND_REAPER_INTERVAL_SECONDS * MS_PER_SECOND, lease: { ttlSeconds: REAPER_LEASE_TTL_SECONDS } };
}

/**
 * One sweep now, under the reaper lease (the nudge: `POST /api/admin/command_reaper/sweep`);
 * busy, with the holder, when another sweep holds it. `minGapSeconds`: busy too unless the last
 * sweep started that long ago.
 */
export async function sweepStrandedCommands(deps: ReaperDeps, opts: { trigger: 'timer' | 'nudge'; minGapSeconds: number | null }): Promise<SweepResult | SweepBusy> {
  const out = await withLease(deps, { name: REAPER_LEASE, ttlSeconds: REAPER_LEASE_TTL_SECONDS, minGapSeconds: opts.minGapSeconds }, () => reapStrandedCommands(deps, opts.trigger));
  if (out.ran) return out.value;
  const held = await leaseHolder(deps.db, REAPER_LEASE);
  return { status: 'busy', holder: held?.holder ?? null, expires_at: held?.expires_at ?? null };
}

/**
 * One sweep's work, the caller holding the reaper lease: gives the claims of paused executions
 * whose holder is gone back to the pause (withdrawPausedClaims: no worker may take them over
 * before the resume, which issues them); marks CLAIMED/RUNNING commands of other executions whose
 * holder is gone (see markStrandedClaims) so a live worker may claim them again, touches PENDING
 * ones waiting past SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS, at most
 * SVC_COMMAND_REAPER_MAX_PER_RUN in all, and republishes their notification; gives back the limit
 * slots cancelled commands kept past their holder's lease (releaseKeptSlots). Never completes,
 * fails or moves a command: the claim policy decides who runs it next.
 */
export async function reapStrandedCommands(deps: ReaperDeps, trigger: 'timer' | 'nudge'): Promise<SweepResult> {
  const c = deps.config;
  const max = c.SVC_COMMAND_REAPER_MAX_PER_RUN;
  // By the claim endpoints' policy, not the reaper's hard timeout: a withdrawn claim is taken
  // over at the resume, which a healthy holder's claim must not be (running ones finish).
  const withdrawn = await withdrawPausedClaims(deps.db, claimPolicyOf(c), max);
  const claims = await markStrandedClaims(deps.db, {
    staleSeconds: c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS,
    hardTimeoutSeconds: c.SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS,
    max: max - withdrawn.length,
  });
  // Slots kept by cancelled commands whose holder went without a report (migrations/0054): given
  // back under the same lease as a claim, so a limit counts their calls until they surely ended.
  const released = await releaseKeptSlots(deps.db, { staleSeconds: c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS, hardTimeoutSeconds: c.SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS, max: max - withdrawn.length - claims.stranded.length });
  const pending = await touchStalePending(deps.db, { retrySeconds: c.SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS, max: max - withdrawn.length - claims.stranded.length - released.length });
  const byReason: Partial<Record<StrandedReason, number>> = {};
  for (const s of claims.stranded) byReason[s.reason] = (byReason[s.reason] ?? 0) + 1;
  if (pending.republished.length) byReason.pending_stale = pending.republished.length;
  const republished = claims.stranded.length + pending.republished.length;
  // A released slot wakes the claimers of its key's waiting commands as a republished command does
  // (a withdrawn claim's too: its limit's slot is free).
  const freed = released.length + withdrawn.length;
  if (republished || freed) await deps.bus.publish(republished + freed, claims.stranded.length > 0);
  // And this server's admitter: a slot given back may be a cancelled execution's kept one (migrations/0055).
  if (freed) deps.flowClock?.freed();
  const scanned = claims.scanned + pending.scanned;
  deps.metrics.reaperSweeps.inc({ trigger });
  deps.metrics.reaperScanned.inc(scanned);
  for (const [reason, n] of Object.entries(byReason)) deps.metrics.reaperRepublished.inc({ reason }, n);
  if (republished) {
    deps.log.info({ republished, by_reason: byReason, commands: [...claims.stranded.map((s) => s.command_id), ...pending.republished] }, 'command reaper republished stranded commands');
  }
  if (released.length) deps.log.info({ commands: released }, "command reaper gave back the limit slots of cancelled commands whose worker's lease expired");
  if (withdrawn.length) {
    deps.metrics.reaperWithdrawn.inc(withdrawn.length);
    deps.log.info({ commands: withdrawn }, 'command reaper gave the claims of paused executions whose worker is gone back to the pause: their resume issues them');
  }
  return { status: 'ok', scanned, republished, by_reason: byReason, released: released.length, withdrawn: withdrawn.length };
}
