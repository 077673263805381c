import type { CatalogHead } from './catalog.repo.ts';
import type { Queryable } from './queryable.ts';

/**
 * What starting executions needs before anything is written, in one round trip: the newest
 * catalog version of each path, and `n` new execution ids (ids of starts that fail are skipped).
 */
export async function startPrelude(q: Queryable, paths: string[], n: number): Promise<{ heads: Map<string, CatalogHead>; ids: number[] }> {
  // Prepared: a start batch sends it whenever its heads or ids are not in memory.
  const { rows } = await q.query<{ heads: CatalogHead[] | null; ids: (number | string)[] | null }>({
    name: 'svc_start_prelude',
    text: `SELECT (SELECT json_agg(h) FROM (SELECT DISTINCT ON (path) catalog_id, path, kind, version FROM core.catalog
                                             WHERE path = ANY($1::text[]) ORDER BY path, version DESC) h) AS heads,
                  (SELECT array_agg(nextval('core.execution_id_seq')) FROM generate_series(1, $2)) AS ids`,
    values: [[...new Set(paths)], n],
  });
  const heads = new Map((rows[0].heads ?? []).map((h) => [h.path, h]));
  return { heads, ids: (rows[0].ids ?? []).map(Number) };
}
