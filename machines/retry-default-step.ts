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
