import { EVENT } from '../../machines/event-types.ts';
import type { ExecutionEvent, ExecutionSteps } from './run-api.ts';
import { printableText } from './text-width.ts';

export type ProgressChange =
  | { kind: 'enter'; step: string }
  | { kind: 'exit'; step: string; status: string; message: string | undefined };

/** One line for an error value of the API: its `message` when it has one (control characters escaped: a cancel's reason is anyone's text), else compact JSON. */
export function errorMessage(error: unknown): string {
  if (typeof error === 'string') return printableText(error);
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') return printableText(error.message);
  return JSON.stringify(error);
}

/** Steps entered and finished, folded from step.enter / step.exit events; no I/O. */
export class StepProgress {
  readonly total: number | undefined;
  private readonly running = new Map<string, number>();
  private readonly done = new Set<string>();
  // Running loops' items, by step, as GET /state last said (a terminal shows them beside the step).
  private loops = new Map<string, { done: number; length: number }>();

  constructor(total: number | undefined) {
    this.total = total;
  }

  /** Folds one event; returns what changed for the user, or undefined for events that do not show. */
  apply(e: ExecutionEvent): ProgressChange | undefined {
    const step = e.step;
    if (!step) return undefined;
    if (e.event_type === EVENT.stepEnter) {
      this.running.set(step, (this.running.get(step) ?? 0) + 1);
      return { kind: 'enter', step };
    }
    if (e.event_type === EVENT.stepExit) {
      const left = (this.running.get(step) ?? 1) - 1;
      if (left > 0) this.running.set(step, left);
      else {
        this.running.delete(step);
        this.loops.delete(step);
      }
      this.done.add(step);
      const context = e.context;
      const status = context && typeof context === 'object' && 'status' in context && typeof context.status === 'string' ? context.status : 'done';
      return { kind: 'exit', step, status, message: e.error === undefined || e.error === null ? undefined : errorMessage(e.error) };
    }
    return undefined;
  }

  /** Distinct steps finished so far. */
  get doneCount(): number {
    return this.total === undefined ? this.done.size : Math.min(this.done.size, this.total);
  }

  /** "done/total", or just "done" when the total is unknown. */
  get counter(): string {
    return this.total === undefined ? String(this.doneCount) : `${this.doneCount}/${this.total}`;
  }

  /**
   * The counter of an execution that ended `failed` at `failedStep` (its error's `step`): that
   * step ended but is not done, as the execution's `progress` counts (machines/execution-progress.ts).
   */
  finalCounter(failedStep: string | undefined): string {
    const failing = failedStep !== undefined && this.done.has(failedStep) ? 1 : 0;
    const done = Math.max(0, this.doneCount - failing);
    return this.total === undefined ? String(done) : `${done}/${this.total}`;
  }

  /** Steps entered and not yet exited, in the order they were entered. */
  get runningSteps(): string[] {
    return [...this.running.keys()];
  }

  /**
   * Takes the loops' items from the execution's step states (RunApi.steps). The state is read after
   * the events: a loop it shows ended while the events still say it runs keeps its last count.
   */
  setLoops(steps: ExecutionSteps): void {
    const read = new Map(Object.entries(steps).flatMap(([step, s]) => (s.loop ? [[step, { done: s.loop.done, length: s.loop.length }]] : [])));
    for (const [step, loop] of this.loops) if (!read.has(step) && this.running.has(step)) read.set(step, loop);
    this.loops = read;
  }

  /** A running step as the live line names it: `many (5/12 items)` for a loop, else its name. */
  runningText(step: string): string {
    const loop = this.loops.get(step);
    return loop ? `${step} (${loop.done}/${loop.length} items)` : step;
  }
}
