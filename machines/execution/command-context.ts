import { templateRefs, type TemplateRefs } from '../../src/dsl/template-refs.ts';
import type { Segment } from './segments.ts';
import type { RenderContext } from './types.ts';

const refsCache = new WeakMap<Segment, TemplateRefs>();

// Roots a command may carry only when its templates read them: they grow with the execution
// (every step's outcome, vars, the payload), and a command row stores its context.
const PRUNED_ROOTS = ['workload', 'args', 'vars'] as const;

/** What the templates of a segment's tasks read; `mcp` tasks also read `workload.access_token`. */
export function segmentRefs(segment: Segment): TemplateRefs {
  let refs = refsCache.get(segment);
  if (!refs) {
    refs = templateRefs(segment.tasks);
    if (segment.tasks.some((t) => t.kind === 'mcp')) refs = { ...refs, roots: new Set([...refs.roots, 'workload']) };
    refsCache.set(segment, refs);
  }
  return refs;
}

/**
 * The render context a command carries: the full one, less the roots and steps its templates
 * never read. Rendering sees the same values either way, so results and template errors match.
 */
export function commandContext(full: RenderContext, refs: TemplateRefs): RenderContext {
  const out: RenderContext = { ...full };
  for (const root of PRUNED_ROOTS) if (!refs.roots.has(root)) delete out[root];
  if (!refs.roots.has('steps')) delete out.steps;
  else if (refs.steps !== 'all') {
    const all = (full.steps ?? {}) as Record<string, unknown>;
    const picked: Record<string, unknown> = {};
    for (const name of refs.steps) if (Object.hasOwn(all, name)) picked[name] = all[name];
    out.steps = picked;
  }
  return out;
}
