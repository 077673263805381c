import type { ExecutionContext } from './types.ts';

/** Where one step is, as its region of the execution statechart shows it. */
export type StepPhase = 'idle' | 'active' | 'completed' | 'failed';

// Guards of every region ask this once per step per transition: the set of steps with a run in
// progress is computed once per `runs` object (a transition that changes runs copies it).
const activeCache = new WeakMap<object, Set<string>>();

function activeSteps(ctx: ExecutionContext): Set<string> {
  let set = activeCache.get(ctx.runs);
  if (!set) {
    set = new Set<string>();
    for (const run of Object.values(ctx.runs)) set.add(run.step);
    activeCache.set(ctx.runs, set);
  }
  return set;
}

/** The phase of a step in a context: running now, else its last outcome, else not entered yet. */
export function stepPhase(ctx: ExecutionContext, step: string): StepPhase {
  if (activeSteps(ctx).has(step)) return 'active';
  const outcome = ctx.steps[step];
  if (!outcome) return 'idle';
  return outcome.status === 'ok' ? 'completed' : 'failed';
}

/** The top-level state of an execution snapshot's value: running, completed, failed or cancelled. */
export function topStateOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return Object.keys(value)[0] ?? '';
  return '';
}
