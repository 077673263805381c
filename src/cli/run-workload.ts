import { checkInputs, type InputProblem } from '../dsl/check-inputs.ts';
import { parseInputText } from '../dsl/parse-input-text.ts';
import type { NormalizedPlaybook } from '../dsl/parse-playbook.ts';

export type PreparedPayload = { ok: true; payload: Record<string, unknown> } | { ok: false; problems: InputProblem[] };

/**
 * The payload `svc run` sends: `--payload` with each `--set key=value` over it, the value read as
 * the type `playbook` declares for `key` (a string when undeclared or the playbook is unknown),
 * then the merged workload checked against its `inputs:` as the server will (check-inputs.ts).
 */
export function preparePayload(playbook: NormalizedPlaybook | null, payload: Record<string, unknown>, sets: readonly (readonly [string, string])[]): PreparedPayload {
  const out = { ...payload };
  const problems: InputProblem[] = [];
  for (const [key, text] of sets) {
    const parsed = parseInputText(playbook?.inputs?.[key]?.type, text);
    if (parsed.ok) out[key] = parsed.value;
    else problems.push({ path: `workload.${key}`, message: parsed.message });
  }
  // Every field at once, as the server names them: a --set that does not read as its type does
  // not hide a required input left out (its own "is required" aside).
  const failed = playbook ? checkInputs(playbook.inputs, { ...playbook.workload, ...out }).filter((p) => !problems.some((q) => q.path === p.path)) : [];
  const all = [...problems, ...failed];
  return all.length > 0 ? { ok: false, problems: all } : { ok: true, payload: out };
}
