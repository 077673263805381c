import type { EngineDeps } from '../../actors/engine-deps.ts';
import { autoResume, AUTO_RESUME } from './auto-resume.ts';
import { BATCH_SWEEP, sweepBatches } from './batch-sweep.ts';
import { reapStrandedCommands, reaperSchedule, type ReaperDeps } from './command-reaper.ts';
import { every, once, type Periodic } from './every.ts';
import { expireIdempotencyKeys, IDEMPOTENCY_KEY_EXPIRY } from './idempotency-key-expiry.ts';
import { expireKeychainRenewals, KEYCHAIN_RENEWAL_EXPIRY } from './keychain-renewal-expiry.ts';
import { expireKeychainEntries, KEYCHAIN_ENTRY_EXPIRY } from './keychain-entry-expiry.ts';
import { FLOW_KEY_SWEEP, sweepFlowKeys } from './flow-key-sweep.ts';
import { INBOX_SWEEP, sweepInbox } from './inbox-sweep.ts';
import { sweepWorkerPools, WORKER_POOL_SWEEP } from './worker-pool-sweep.ts';
import { eventPartitionKeeper, eventPartitionsSpec } from '../partitions/event-partitions.ts';
import { startScheduler } from '../triggers/scheduler.ts';
import { ScheduleClock } from '../triggers/schedule-clock.ts';
import { startTimekeeper } from '../waits/timekeeper.ts';
import { WaitClock } from '../waits/wait-clock.ts';
import { FlowClock } from '../flow/flow-clock.ts';
import { startAdmitter, type AdmitterDeps } from '../flow/admitter.ts';
import { startNatsSubscriptions, type NatsSubscriptionsDeps } from '../triggers/nats-subscriptions.ts';

export type StartPeriodicDeps = EngineDeps & ReaperDeps & NatsSubscriptionsDeps & AdmitterDeps;

/**
 * Starts every piece of a server's background work, each through `every` (or `once`); the one
 * place that does. Returns a stop function that stops them all and waits for runs in flight.
 */
export function startPeriodic(deps: StartPeriodicDeps): () => Promise<void> {
  const jobs: Periodic[] = [
    every(deps, INBOX_SWEEP, () => sweepInbox(deps)),
    every(deps, IDEMPOTENCY_KEY_EXPIRY, () => expireIdempotencyKeys(deps)),
    every(deps, KEYCHAIN_RENEWAL_EXPIRY, () => expireKeychainRenewals(deps)),
    every(deps, KEYCHAIN_ENTRY_EXPIRY, () => expireKeychainEntries(deps)),
    every(deps, BATCH_SWEEP, () => sweepBatches(deps)),
    every(deps, WORKER_POOL_SWEEP, () => sweepWorkerPools(deps)),
    every(deps, FLOW_KEY_SWEEP, () => sweepFlowKeys(deps)),
    every(
      deps,
      eventPartitionsSpec(deps.config.SVC_PARTITION_INTERVAL_SECONDS),
      eventPartitionKeeper(deps, { width: deps.config.SVC_EVENT_PARTITION_EXECUTIONS, retentionDays: deps.config.SVC_RETENTION_DAYS ?? null, archiveDir: deps.config.SVC_ARCHIVE_DIR ?? null }),
    ),
    // Waits in the background for worker pools to beat, which needs this server listening.
    once(deps, { name: AUTO_RESUME }, (signal) => autoResume(deps, { signal })),
  ];
  // Off: nothing is recovered automatically; the nudge (POST /api/admin/command_reaper/sweep) still sweeps.
  if (deps.config.SVC_COMMAND_REAPER_ENABLED) jobs.push(every(deps, reaperSchedule(deps.config), () => reapStrandedCommands(deps, 'timer')));
  // Schedules keep their own time (the earliest next fire, not an interval): see its file.
  jobs.push(startScheduler(deps, deps.scheduleClock ?? new ScheduleClock()));
  // Waits keep their own time too: the earliest wake-up, or sooner when this server writes one.
  jobs.push(startTimekeeper(deps, deps.waitClock ?? new WaitClock()));
  // Flow control's admissions keep their own time too: a debounce window's close, a bucket's refill.
  jobs.push(startAdmitter(deps, deps.flowClock ?? new FlowClock()));
  // NATS triggers: a durable consumer per trigger, read again on every registration, pause and resume.
  jobs.push(startNatsSubscriptions(deps));
  return async () => {
    await Promise.all(jobs.map((j) => j.stop()));
  };
}
