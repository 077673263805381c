import { WaitClock } from '../waits/wait-clock.ts';

/**
 * Tells this server's scheduler that a run a schedule waits for has ended here: a schedule of
 * overlap `queue` whose due time waits for its previous run then looks again at once, not at its
 * next recheck. Runs that end on another server are seen at that recheck (scheduler.ts).
 */
export class ScheduleClock {
  /** The scheduler's ear (clockedLoop listens to it). */
  readonly clock = new WaitClock();
  #awaited = new Set<number>();

  /** After a tick: the unfinished runs its waiting schedules wait for (none: nothing is watched). */
  awaitRuns(executionIds: Iterable<number>): void {
    this.#awaited = new Set(executionIds);
  }

  /** After a commit: these executions ended; a nudge when one of them was awaited. */
  ended(finished: readonly { executionId: number }[]): void {
    if (this.#awaited.size === 0) return;
    for (const f of finished) if (this.#awaited.has(f.executionId)) return this.clock.nudge(Date.now());
  }
}
