import type { SimulatedOutcome, SimulatedOutcomes } from '../../../machines/simulate-playbook.ts';

/**
 * The outcomes chosen so far with one more for `step` (a step that runs again takes the next).
 * Own keys only: a step may be named like a property every object inherits (`constructor`),
 * which a plain lookup would take for an outcome already chosen.
 */
export function withOutcome(chosen: SimulatedOutcomes, step: string, outcome: SimulatedOutcome): SimulatedOutcomes {
  const before = Object.hasOwn(chosen, step) ? chosen[step] : undefined;
  return { ...chosen, [step]: [...(Array.isArray(before) ? before : before ? [before] : []), outcome] };
}
