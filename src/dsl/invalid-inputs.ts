import { ServiceError } from '../errors.ts';
import { checkInputs, describeInputProblems, type InputProblem } from './check-inputs.ts';
import type { NormalizedPlaybook } from './parse-playbook.ts';

/**
 * The 422 for a start of `playbook` with `payload` whose merged workload fails its `inputs:`
 * (`{code: invalid_inputs, message, problems: [{path: 'workload.x', message}]}`), else null.
 */
export function invalidInputs(playbook: NormalizedPlaybook, payload: Record<string, unknown>): ServiceError | null {
  const problems = startInputProblems(playbook, payload);
  if (problems.length === 0) return null;
  const message = `${playbook.metadata.path}: the workload does not match the playbook inputs: ${describeInputProblems(problems)}`;
  return new ServiceError('invalid_inputs', { code: 'invalid_inputs', message, problems, errors: problems.map((p) => `${p.path}: ${p.message}`) });
}

/** The problems of the workload a start of `playbook` with `payload` runs with (its `workload:`, then the payload) against its `inputs:`. */
export function startInputProblems(playbook: NormalizedPlaybook, payload: Record<string, unknown>): InputProblem[] {
  // Most playbooks declare no inputs: a start of one merges nothing here.
  if (playbook.inputs === undefined) return [];
  return checkInputs(playbook.inputs, { ...playbook.workload, ...payload });
}
