import type { ExecutionContext, LoopState, StepRun } from './types.ts';
import type { NumberKey } from './keys.ts';

// What the guards ask of a step's runs. Every region's guards ask several times per microstep, so
// these scan the runs map without allocating (a step has few runs: one, or a few joined branches).

/** The number of runs of a step in progress or ended but not yet left. */
export function runCount(ctx: ExecutionContext, step: string): number {
  let n = 0;
  for (const id in ctx.runs) if (ctx.runs[id as NumberKey].step === step) n++;
  return n;
}

/** The oldest run of the step whose work is over (it leaves first). */
export function endedRun(ctx: ExecutionContext, step: string): StepRun | undefined {
  let found: StepRun | undefined;
  for (const id in ctx.runs) {
    const r = ctx.runs[id as NumberKey];
    if (r.step === step && r.outcome && (!found || r.id < found.id)) found = r;
  }
  return found;
}

/** A loop run that may launch another item now: fewer than its limit in flight, none failed, items left. */
export function hasRoom(run: StepRun): boolean {
  const loop = run.loop;
  if (!loop || run.outcome || loop.failed || loop.next >= loop.items.length) return false;
  return inFlight(loop) < (loop.parallel ? loop.maxInFlight : 1);
}

/** A loop run with nothing in flight and nothing more to launch (all done, or one failed). */
export function loopOver(run: StepRun): boolean {
  const loop = run.loop;
  if (!loop || run.outcome || inFlight(loop) > 0) return false;
  return Boolean(loop.failed) || loop.done === loop.items.length;
}

/** The runs of a step that pass a test. */
export function runsWhere(ctx: ExecutionContext, step: string, test: (r: StepRun) => boolean): StepRun[] {
  const out: StepRun[] = [];
  for (const id in ctx.runs) {
    const r = ctx.runs[id as NumberKey];
    if (r.step === step && test(r)) out.push(r);
  }
  return out;
}

/** Whether some run of a step passes a test. */
export function someRun(ctx: ExecutionContext, step: string, test: (r: StepRun) => boolean): boolean {
  for (const id in ctx.runs) {
    const r = ctx.runs[id as NumberKey];
    if (r.step === step && test(r)) return true;
  }
  return false;
}

// Every item launched (`next`) is in flight until it is done (`done`): counted without walking
// the iterations map.
const inFlight = (loop: LoopState): number => loop.next - loop.done;
