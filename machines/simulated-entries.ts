import { EVENT } from './event-types.ts';
import type { Effect } from './execution/types.ts';
import type { Undecided } from './simulation-data.ts';

/**
 * The steps a simulation entered, in order, each with the step whose exit entered it (null: the
 * start). The machine takes a step's arcs in the transition that exits it, so an entry comes from
 * the step that exited last before it (a fork's entries share it); a step that exited before that
 * one and entered nothing ended its branch. The path alone cannot say this: of two branches
 * meeting at a step, the one entered later may be the one still running.
 */
export class SimulatedEntries {
  readonly path: string[] = [];
  readonly from: (string | null)[] = [];
  private lastExit: string | null = null;

  /** Reads one transition's effects in order; with `undecided`, only those before that decision (a step's arcs once it exited, its loop once it entered). */
  follow(effects: readonly Effect[], undecided: Undecided | null = null): void {
    const stopAt = undecided && (undecided.at === 'next' ? EVENT.stepExit : EVENT.stepEnter);
    for (const e of effects) {
      if (e.type !== 'record' || !e.step) continue;
      if (e.eventType === EVENT.stepEnter) {
        this.path.push(e.step);
        this.from.push(this.lastExit);
      }
      if (undecided && e.eventType === stopAt && e.step === undecided.step) return;
      if (e.eventType === EVENT.stepExit) this.lastExit = e.step;
    }
  }
}
