import { actualTypeName, matchesType } from '../crypto/validate-against-schema.ts';
import { enumMessage, sameValue, type Inputs } from './inputs.schema.ts';

// The one check of a workload against a playbook's `inputs:`: the start routes (422), a child
// playbook's start (a task error), `svc run --set` and the console's run form all use it.
// Pure: the console bundles it.

export type InputProblem = { path: string; message: string };

/**
 * Problems of `workload` (the merged one: playbook defaults, input defaults, the start's payload)
 * against `inputs`, one per failing field at `workload.<name>`; empty when it passes or when no
 * inputs are declared. Fields not declared pass unchecked.
 */
export function checkInputs(inputs: Inputs | undefined, workload: Record<string, unknown>): InputProblem[] {
  const problems: InputProblem[] = [];
  for (const [name, input] of Object.entries(inputs ?? {})) {
    const path = `workload.${name}`;
    if (!Object.hasOwn(workload, name) || workload[name] === undefined) {
      if (input.required) problems.push({ path, message: 'is required' });
      continue;
    }
    const value = workload[name];
    if (!matchesType(value, input.type)) problems.push({ path, message: `must be ${input.type}, got ${actualTypeName(value)}` });
    else if (input.enum && !input.enum.some((allowed) => sameValue(allowed, value))) {
      problems.push({ path, message: enumMessage(input.enum, value) });
    }
  }
  return problems;
}

/** The declared defaults, by name: they override the playbook's `workload:` values and yield to a start's payload. */
export function inputDefaults(inputs: Inputs | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, input] of Object.entries(inputs ?? {})) if (input.default !== undefined) out[name] = input.default;
  return out;
}

/** One line naming every problem, for a message: `workload.n: must be integer, got string; ...`. */
export function describeInputProblems(problems: InputProblem[]): string {
  return problems.map((p) => `${p.path}: ${p.message}`).join('; ');
}
