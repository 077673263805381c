import type { NormalizedPlaybook, NormalizedStep } from '../../src/dsl/parse-playbook.ts';

const index = new WeakMap<NormalizedPlaybook, Map<string, NormalizedStep>>();

/** The step of a playbook by name (steps are looked up on every transition: indexed once per playbook). */
export function stepNamed(pb: NormalizedPlaybook, name: string): NormalizedStep {
  let byName = index.get(pb);
  if (!byName) index.set(pb, (byName = new Map(pb.workflow.map((s) => [s.step, s]))));
  const step = byName.get(name);
  if (!step) throw new Error(`unknown step ${name}`);
  return step;
}
