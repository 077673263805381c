import type { PlaybookDocument } from './playbook.schema.ts';

/**
 * `workload:` values an input's `default` goes over: a start's workload is the `workload:` block,
 * the inputs' defaults over it, then the payload (docs/playbook-dsl.md, Inputs), so such a value
 * is never seen by any run. Registration checks a workload value against its input only where the
 * input has no default, and said nothing of these: a warning each (one equal to the default is
 * no surprise, and none).
 */
export function shadowedWorkloadWarnings(doc: Pick<PlaybookDocument, 'workload' | 'inputs'>): string[] {
  if (!doc.inputs || !doc.workload) return [];
  const warnings: string[] = [];
  for (const [name, value] of Object.entries(doc.workload)) {
    const input = Object.hasOwn(doc.inputs, name) ? doc.inputs[name] : undefined;
    if (input?.default === undefined || JSON.stringify(input.default) === JSON.stringify(value)) continue;
    warnings.push(`workload.${name}: has no effect: the default of inputs.${name} (${JSON.stringify(input.default)}) goes over it, and a start's payload over both (drop one of the two)`);
  }
  return warnings;
}
