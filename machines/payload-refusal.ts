import type { NormalizedPlaybook } from '../src/dsl/parse-playbook.ts';
import { checkInputs, describeInputProblems } from '../src/dsl/check-inputs.ts';

/**
 * Why a start with `payload` would be refused (422 invalid_inputs), or null: a simulation of it
 * runs nothing (`svc simulate --payload`, simulatePlaybook's `payload`). A required input the
 * payload leaves out is what another start gives: undecided, not refused.
 */
export function payloadRefusal(pb: NormalizedPlaybook, payload: Record<string, unknown>): string | null {
  const refused = checkInputs(pb.inputs, { ...pb.workload, ...payload }).filter((p) => Object.hasOwn(payload, p.path.slice('workload.'.length)));
  return refused.length ? `a start with this payload is refused (invalid_inputs): ${describeInputProblems(refused)}` : null;
}
