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
