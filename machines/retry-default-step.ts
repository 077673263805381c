import { entryStep } from '../src/dsl/parse-playbook.ts';

/**
 * The step a retry starts from when none is named: the step whose failure ended the execution;
 * for a cancelled one, the first step in playbook order the cancel cut short (`cutShort`), else
 * its entry step; none for any other (a completed one: a step must be named). The server's retry
 * and the console's Retry both take it from here.
 */
export function retryDefaultStep(e: { status: string; errorStep: string | undefined; steps: readonly string[]; cutShort: (step: string) => boolean }): string | undefined {
  if (e.errorStep !== undefined) return e.errorStep;
  if (e.status !== 'cancelled' || e.steps.length === 0) return undefined;
  return e.steps.find(e.cutShort) ?? entryStep(e.steps);
}

/**
 * Whether a retry may start from `step`: the entry step, the step whose failure ended the
 * execution, a step that ran to an outcome (`exited`: the machine's `completedSteps`), or one the
 * cancel cut short. From a step the execution never reached every step that ended would be
 * replayed down the same arcs and the retry would run nothing from it: the server's retry refuses
 * it (422), and the console's Retry offers only the steps this allows.
 */
export function retryReaches(step: string, e: { entry: string; errorStep: string | undefined; exited: (step: string) => boolean; cutShort: (step: string) => boolean }): boolean {
  return step === e.entry || step === e.errorStep || e.exited(step) || e.cutShort(step);
}
