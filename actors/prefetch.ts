import { getCatalogEntry, type CatalogRow } from '../src/db/catalog.repo.ts';
import { allocateExecutionIds, runningChildren } from '../src/db/execution.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';

/**
 * What effects need from the database, read before a fold so that none reads inside it: the
 * catalog head of a child playbook's path (null: not in the catalog), the stored running children
 * of an execution that cancels its children, and ids for the children it starts.
 */
export type Reads = {
  readonly catalog: ReadonlyMap<string, CatalogRow | null>;
  readonly children: ReadonlyMap<number, readonly number[]>;
  readonly ids: readonly number[];
};

/** What a fold met and lacked; the fold is then redone from the same hydration with these read. */
export type Needs = { paths: Set<string>; children: Set<number>; ids: number };

/** Nothing read yet: the first fold of every unit. */
export const NO_READS: Reads = { catalog: new Map(), children: new Map(), ids: [] };

/** A fold's empty list of needs, filled by effect-rows. */
export const noNeeds = (): Needs => ({ paths: new Set(), children: new Set(), ids: 0 });

/** Whether a fold lacked anything (then it is redone with it read). */
export const hasNeeds = (n: Needs): boolean => n.paths.size > 0 || n.children.size > 0 || n.ids > 0;

/** `reads` with `needs` read too (one query per path and per parent, one for all ids, as before the split). */
export async function readNeeds(q: Queryable, reads: Reads, needs: Needs): Promise<Reads> {
  const catalog = new Map(reads.catalog);
  for (const path of needs.paths) catalog.set(path, (await getCatalogEntry(q, path)) ?? null);
  const children = new Map(reads.children);
  for (const parent of needs.children) children.set(parent, await runningChildren(q, parent));
  const ids = needs.ids > 0 ? [...reads.ids, ...(await allocateExecutionIds(q, needs.ids))] : reads.ids;
  return { catalog, children, ids };
}
