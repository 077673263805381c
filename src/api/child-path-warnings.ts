import { getCatalogEntry } from '../db/catalog.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { literalChildPath } from '../dsl/literal-child-path.ts';
import type { NormalizedPlaybook } from '../dsl/parse-playbook.ts';

/**
 * Registration warnings for `playbook` tasks whose literal path names no playbook in the catalog
 * now: nothing there (a run of the task fails `not_found` until one is registered), or an MCP
 * server document, which never runs (`not_found` too, actors/effect-rows.ts). Warnings, not
 * problems: the child may be registered after its parent (`svc catalog register parent child`).
 * A templated path is known only as it renders; the playbook's own path is there (just stored).
 */
export async function childPathWarnings(q: Queryable, pb: NormalizedPlaybook, path: string): Promise<string[]> {
  const kinds = new Map<string, string | null>();
  const warnings: string[] = [];
  for (const [i, step] of pb.workflow.entries()) {
    for (const [j, task] of step.tasks.entries()) {
      const child = literalChildPath(task);
      if (child === undefined || child === path) continue;
      if (!kinds.has(child)) kinds.set(child, (await getCatalogEntry(q, child))?.kind ?? null);
      const kind = kinds.get(child);
      const at = `${step.tasks.length > 1 ? `workflow[${i}].tool[${j}]` : `workflow[${i}].tool`}.path`;
      if (kind === null) warnings.push(`${at}: no playbook at ${child} in the catalog yet: until one is registered there, this task fails (not_found)`);
      else if (kind === 'mcp') warnings.push(`${at}: ${child} is an MCP server document (kind Mcp), not a playbook: this task fails (not_found)`);
    }
  }
  return warnings;
}
