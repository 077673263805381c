import type { UnitWait } from '../src/db/unit-write.ts';
import type { WaitClock } from '../src/waits/wait-clock.ts';
import type { HotSnapshots } from './hot-snapshots.ts';
import type { Snapshot } from './unit-types.ts';

/** An execution as a committed write left it: running with this state, or gone from memory. */
export type Published = { executionId: number; lastEventId: number; snapshot: Snapshot; snapshotEventId: number } | { executionId: number; gone: true };

/** The last step, after commit: this process now knows the state of every execution the unit held. */
export function publish(snapshots: HotSnapshots | undefined, published: readonly Published[]): void {
  if (!snapshots) return;
  for (const p of published) {
    if ('gone' in p) snapshots.delete(p.executionId);
    else snapshots.set(p.executionId, p.lastEventId, p.snapshot, p.snapshotEventId);
  }
}

/** After commit: this server's timekeeper hears of the earliest wake-up time the unit wrote. */
export function publishWaits(clock: WaitClock | undefined, waits: readonly UnitWait[]): void {
  if (!clock || !waits.length) return;
  let earliest = Infinity;
  for (const w of waits) if (w.wake_at !== null) earliest = Math.min(earliest, Date.parse(w.wake_at));
  if (earliest < Infinity) clock.nudge(earliest);
}
