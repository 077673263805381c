import type { EngineDeps } from '../../actors/engine-deps.ts';
import { routeEvents } from '../../actors/route-events.ts';
import { EVENT } from '../../machines/event-types.ts';
import type { CommandBus } from '../bus/command-bus.ts';
import { admitQueued, nextAdmitterLook, type Admitted } from '../db/flow.repo.ts';
import type { RoutedEvent } from '../protocol.ts';
import { WaitClock } from '../waits/wait-clock.ts';
import { clockedLoop } from '../periodic/clocked-loop.ts';
import type { FlowClock } from './flow-clock.ts';

// The admitter (DESIGN.md "Flow control"): every server runs one. A look admits what may run now
// (src/db/flow.repo.ts admitQueued: one statement takes each key's room and counts it) and routes
// `execution.admitted` to each admitted execution through routeEvents, ADMITS_PER_LOOK at most.
// It sleeps until the soonest a debounce window closes or a rate-limited key with work waiting
// gets a token back (waking claimers then: no one else knows a bucket refilled), at most
// ADMITTER_MAX_SLEEP_MS. This server's commands of a rate, issued or claimed, nudge it through
// its clock (so it learns of the next refill), as do this server's routings that queue an
// execution, and those that end an admitted or queued one while its last look left any queued
// (most executions are admitted at their start: a look after each end would find nothing), or
// end a limit's command while its last look left executions queued on that limit. An
// admission whose routing never happened (its server stopped) is found again after
// STRAY_ADMISSION_MS and routed again; a second `execution.admitted` is moot.

/** Longest sleep between looks. */
export const ADMITTER_MAX_SLEEP_MS = 1000;
/** Shortest: a look that found a key with room waits this long before waking claimers again. */
const MIN_LOOK_MS = 20;
/** Executions admitted per look (one statement, one unit of work routing them). */
export const ADMITS_PER_LOOK = 500;
/** An admission not routed within this long is routed again (by any server: the one that admitted it stopped). */
const STRAY_ADMISSION_MS = 5_000;

export type AdmitterDeps = EngineDeps & { bus: CommandBus };

/**
 * One look: admits what may run now and routes `execution.admitted` to them and to `unrouted`
 * (admissions an earlier look could not route: a failed routing does not wait for the stray
 * timeout); returns what it admitted. Throws when the routing fails: the caller keeps `all`.
 */
export async function admitNow(deps: EngineDeps, unrouted: readonly Admitted[] = []): Promise<{ admitted: Admitted[]; all: Admitted[] }> {
  const admitted = await admitQueued(deps.db, ADMITS_PER_LOOK, STRAY_ADMISSION_MS);
  // Counted as committed, before the routing: one whose routing fails is routed again as
  // `unrouted` or a stray (`again`), neither counted, so counting after it missed them for good.
  for (const a of admitted) {
    if (a.again) continue;
    const limit = a.limit_name ?? '';
    deps.metrics.flowAdmissions.inc({ limit, kind: 'execution' });
    deps.metrics.flowWaitSeconds.observe({ limit, kind: 'execution' }, a.queued_ms / 1000);
  }
  const all = [...unrouted, ...admitted];
  if (!all.length) return { admitted, all };
  const events: RoutedEvent[] = all.map((a) => ({
    execution_id: a.execution_id,
    event_type: EVENT.executionAdmitted,
    // `at`: when the admission took its slot and token (the limit's clock), not when this routing came.
    // `key` and `priority`: what it was admitted with, which a debounced one's later starts set.
    context: { limit: a.limit_name, key: a.limit_key, priority: a.priority, at: a.admitted_at.toISOString(), ...(a.again ? { again: true } : {}) },
    ...(a.args ? { result: a.args } : {}),
  }));
  try {
    await routeEvents(deps, events);
  } catch (err) {
    throw Object.assign(new Error(`routing ${all.length} admissions failed: ${err instanceof Error ? err.message : String(err)}`), { unrouted: all });
  }
  return { admitted, all };
}

/** Starts this server's admitter; `flow` carries nudges sooner than its sleep. */
export function startAdmitter(deps: AdmitterDeps, flow: FlowClock): { stop(): Promise<void> } {
  // The rate-limited keys that had a token for their waiting commands at the last look: a key's
  // claimers are told once when it gets one, whatever other keys hold.
  let roomBefore = new Set<string>();
  // The limits with a rate, and every limit, as of the last look.
  let rates = new Set<string>();
  let known = new Set<string>();
  // The limits with executions queued on them, as of the last look.
  let queuedOn = new Set<string>();
  let unrouted: Admitted[] = [];
  // Whether executions wait to be admitted, as of the last look (or since: one was queued here).
  let queued = true;
  const clock = new WaitClock();
  flow.listen({
    queued: (atMs) => {
      queued = true;
      clock.nudge(atMs);
    },
    freed: () => {
      if (queued) clock.nudge(Date.now());
    },
    // A limit's command ended: a look only where executions wait on that limit (most commands'
    // limits hold no execution, and a look per step would be waste).
    freedOn: (limits) => {
      if (queued && limits.some((l) => queuedOn.has(l))) clock.nudge(Date.now());
    },
    // Commands of a rate issued or claimed (here; another server's admitter hears of its own): the
    // next look finds when their key has a token, sleeps till then and tells claimers. Those of
    // limits without a rate cost no look; those of a limit defined since the last look do (it
    // may have a rate: without the look its claimers would wait for the next one, up to a second).
    limited: (limits) => {
      if (limits.some((l) => rates.has(l) || !known.has(l))) clock.nudge(Date.now() + MIN_LOOK_MS);
    },
  });
  const loop = clockedLoop(deps.log, 'admitting queued executions', clock, ADMITTER_MAX_SLEEP_MS, async () => {
    // Nothing waited at the last look, nothing was queued here since and nothing is left to route:
    // the look alone (one statement a look while idle); one that finds work looks again at once.
    const admitting = queued || unrouted.length > 0;
    let admitted: Admitted[] = [];
    if (admitting) {
      try {
        admitted = (await admitNow(deps, unrouted)).admitted;
        unrouted = [];
      } catch (err) {
        // Routed again at the next look (a second execution.admitted is moot); once only, so one
        // that cannot be routed holds no others back: then the stray look finds it again.
        const left = (err as { unrouted?: Admitted[] }).unrouted;
        unrouted = left && !unrouted.length ? left.slice(0, ADMITS_PER_LOOK) : [];
        throw err;
      }
    }
    if (admitted.length >= ADMITS_PER_LOOK) return 0;
    const next = await nextAdmitterLook(deps.db, STRAY_ADMISSION_MS);
    const { room, admit, debounce } = next;
    rates = new Set(next.rates);
    known = new Set(next.limits);
    queuedOn = new Set(next.queuedLimits);
    queued = next.queued;
    if (queued && !admitting) return 0;
    // A key with room and commands waiting: claimers hear of it once (they claim what they can,
    // and take more as they report); then again only when its bucket refills. Per key: another
    // key's room that nobody takes (its workers are busy) must not hide this one's refill.
    const roomNow = new Set(next.roomKeys);
    if (next.roomKeys.some((k) => !roomBefore.has(k))) await deps.bus.publish(1, false);
    roomBefore = roomNow;
    let sleepMs = ADMITTER_MAX_SLEEP_MS;
    if (room !== null) sleepMs = Math.min(sleepMs, Math.max(MIN_LOOK_MS, room));
    // Executions due on a rate: the next look admits them when their key has a token again.
    if (admit !== null) sleepMs = Math.min(sleepMs, Math.max(MIN_LOOK_MS, admit));
    if (debounce !== null) sleepMs = Math.min(sleepMs, Math.max(MIN_LOOK_MS, debounce));
    return sleepMs;
  });
  return {
    async stop() {
      flow.listen(undefined);
      await loop.stop();
    },
  };
}
