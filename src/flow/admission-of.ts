import type { Admission } from '../../machines/execution/types.ts';
import { flowKey } from '../../machines/flow-key.ts';
import type { NormalizedPlaybook } from '../dsl/parse-playbook.ts';
import { renderValue } from '../dsl/render.ts';
import { inlineLimitName } from './limit-name.ts';

/**
 * What a new execution of `pb` (at `path`) waits for before its entry step: its `concurrency`
 * limit's key and its `debounce` key, rendered over its workload and arguments; undefined when the
 * playbook has neither. Throws TemplateError or FlowKeyError naming the field.
 */
export function admissionOf(pb: NormalizedPlaybook, path: string, workload: Record<string, unknown>, args: Record<string, unknown>): Admission | undefined {
  if (!pb.concurrency && !pb.debounce) return undefined;
  const scope = { workload, args };
  const render = (template: string | undefined, field: string) => flowKey(renderValue(template ?? '', scope, field), field);
  const c = pb.concurrency;
  return {
    limit: c === undefined ? null : typeof c.limit === 'number' ? inlineLimitName(path) : c.limit,
    key: c === undefined ? null : render(c.key, 'concurrency.key'),
    capacity: c !== undefined && typeof c.limit === 'number' ? c.limit : null,
    debounce: pb.debounce ? { key: render(pb.debounce.key, 'debounce.key'), seconds: pb.debounce.seconds } : null,
  };
}
