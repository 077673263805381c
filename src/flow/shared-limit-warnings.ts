import type { PlaybookCache } from '../../actors/playbook-cache.ts';
import { literalChildPath } from '../dsl/literal-child-path.ts';
import type { NormalizedPlaybook } from '../dsl/parse-playbook.ts';
import { getCatalogEntry } from '../db/catalog.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { inlineLimitName } from './limit-name.ts';

/** The concurrency limit a playbook at `path` takes a slot of (named, or its own `@path`), if any. */
function limitOf(pb: NormalizedPlaybook, path: string): string | undefined {
  const c = pb.concurrency;
  return c === undefined ? undefined : typeof c.limit === 'number' ? inlineLimitName(path) : c.limit;
}

/**
 * Registration warnings for `playbook` tasks whose child (a literal path in the catalog, newest
 * version; or this playbook itself) takes a slot of the same concurrency limit as this playbook:
 * once its executions hold every slot of a key, a child on that key waits for a slot its own
 * parent holds, and neither ever ends.
 */
export async function sharedLimitWarnings(q: Queryable, cache: PlaybookCache, pb: NormalizedPlaybook, path: string): Promise<string[]> {
  const own = limitOf(pb, path);
  if (own === undefined) return [];
  const warnings: string[] = [];
  const limits = new Map<string, string | undefined>();
  for (const [i, step] of pb.workflow.entries()) {
    for (const [j, task] of step.tasks.entries()) {
      const childPath = literalChildPath(task);
      if (childPath === undefined) continue;
      if (!limits.has(childPath)) {
        const row = childPath === path ? undefined : await getCatalogEntry(q, childPath);
        const child = childPath === path ? pb : row && row.kind !== 'mcp' ? cache.compile(row).playbook : undefined;
        limits.set(childPath, child && limitOf(child, childPath));
      }
      if (limits.get(childPath) !== own) continue;
      const at = step.tasks.length > 1 ? `workflow[${i}].tool[${j}]` : `workflow[${i}].tool`;
      const name = own.startsWith('@') ? `this playbook's own concurrency limit (${own})` : `concurrency limit ${own}`;
      warnings.push(
        `${at}: its child ${childPath} takes a slot of ${name}, as this playbook does: once this playbook's executions hold every slot of a key, a child on that key waits for a slot its parent holds, for ever (give one of them another limit, or none)`,
      );
    }
  }
  return warnings;
}
