import { getCatalogEntry } from '../db/catalog.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { describeInputProblems } from '../dsl/check-inputs.ts';
import { startInputProblems } from '../dsl/invalid-inputs.ts';
import { literalChildPath } from '../dsl/literal-child-path.ts';
import type { NormalizedPlaybook } from '../dsl/parse-playbook.ts';
import { TEMPLATE_MARK } from '../dsl/template-ast.ts';
import { isObject } from '../objects.ts';

/**
 * Registration warnings for `playbook` tasks whose literal path names no playbook in the catalog
 * now: nothing there (a run of the task fails `not_found` until one is registered), or an MCP
 * server document, which never runs (`not_found` too, actors/effect-rows.ts). Warnings, not
 * problems: the child may be registered after its parent (`svc catalog register parent child`).
 * A templated path is known only as it renders; the playbook's own path is there (just stored).
 */
export async function childPathWarnings(q: Queryable, pb: NormalizedPlaybook, path: string): Promise<string[]> {
  const entries = new Map<string, { kind: string; payload: unknown } | null>();
  const warnings: string[] = [];
  for (const [i, step] of pb.workflow.entries()) {
    for (const [j, task] of step.tasks.entries()) {
      const child = literalChildPath(task);
      if (child === undefined || child === path) continue;
      if (!entries.has(child)) entries.set(child, (await getCatalogEntry(q, child)) ?? null);
      const entry = entries.get(child);
      const where = step.tasks.length > 1 ? `workflow[${i}].tool[${j}]` : `workflow[${i}].tool`;
      if (!entry) warnings.push(`${where}.path: no playbook at ${child} in the catalog yet: until one is registered there, this task fails (not_found)`);
      else if (entry.kind === 'mcp') warnings.push(`${where}.path: ${child} is an MCP server document (kind Mcp), not a playbook: this task fails (not_found)`);
      else {
        const refused = literalArgsRefused(entry.payload as NormalizedPlaybook, (task as { args?: unknown }).args);
        if (refused) warnings.push(`${where}.args: ${child}'s inputs refuse these args (invalid_inputs): ${refused}; as it is registered now, this task fails and starts no child`);
      }
    }
  }
  return warnings;
}

/**
 * Why the child's newest version refuses a task's `args` (the start's own check, invalidInputs),
 * from what is known before any run: its literal values and the names it gives; a value a template
 * renders is judged as it renders. Undefined when nothing known is refused. The catalog's payload
 * is the playbook normalized at its registration (as PlaybookCache reads it).
 */
function literalArgsRefused(child: NormalizedPlaybook, args: unknown): string | undefined {
  // A whole-args template may render to anything.
  if (args !== undefined && !isObject(args)) return undefined;
  const given = args ?? {};
  const rendered = new Set(Object.keys(given).filter((k) => TEMPLATE_MARK.test(JSON.stringify(given[k]))));
  const known = startInputProblems(child, given).filter((p) => !rendered.has(p.path.slice('workload.'.length)));
  return known.length ? describeInputProblems(known) : undefined;
}
