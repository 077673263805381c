import { templateRefs, type TemplateRefs } from '../../src/dsl/template-refs.ts';
import type { KeychainDefinition } from '../../src/dsl/parse-playbook.ts';
import type { Segment } from './segments.ts';
import type { RenderContext } from './types.ts';

const refsCache = new WeakMap<Segment, TemplateRefs>();

// Roots a command may carry only when its templates read them: they grow with the execution
// (every step's outcome, vars, the payload), and a command row stores its context.
const PRUNED_ROOTS = ['workload', 'args', 'vars'] as const;

/**
 * What the templates of a segment's tasks read, and of the `keychain` definitions they use (the
 * worker renders those over the command's context: an endpoint or a client id from `workload`
 * failed as undefined when no task read `workload`); `mcp` tasks also read `workload.access_token`.
 * `keychain` is the segment's playbook's, the same for every call on the segment.
 */
export function segmentRefs(segment: Segment, keychain: readonly KeychainDefinition[]): TemplateRefs {
  let refs = refsCache.get(segment);
  if (!refs) {
    const tasks = templateRefs(segment.tasks);
    refs = withRefs(tasks, templateRefs(keychain.filter((k) => tasks.keychain.has(k.name))));
    if (segment.tasks.some((t) => t.kind === 'mcp')) refs = { ...refs, roots: new Set([...refs.roots, 'workload']) };
    refsCache.set(segment, refs);
  }
  return refs;
}

/** What `a` or `b` reads (the keychain entries are `a`'s: definitions name none). */
function withRefs(a: TemplateRefs, b: TemplateRefs): TemplateRefs {
  const steps = a.steps === 'all' || b.steps === 'all' ? 'all' : new Set([...a.steps, ...b.steps]);
  return { roots: new Set([...a.roots, ...b.roots]), steps, keychain: a.keychain };
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
