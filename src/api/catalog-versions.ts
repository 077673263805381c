import * as v from 'valibot';
import { getCatalogEntry, listCatalogVersions } from '../db/catalog.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { notFound, ServiceError } from '../errors.ts';
import { unifiedDiff } from '../unified-diff.ts';
import { integer, time } from './answers.ts';

/** The path suffix that asks the catalog for a path's versions instead of its text. */
export const VERSIONS_SUFFIX = '/versions';

export const catalogVersionsAnswer = v.pipe(
  v.object({
    path: v.string(),
    versions: v.array(v.object({ version: integer, catalog_id: integer, kind: v.string(), created_at: time, content_hash: v.pipe(v.string(), v.description('SHA-256 of the content, hex')) })),
    diff: v.optional(v.object({ from: integer, to: integer, unified: v.string() })),
  }),
  v.description(`{path}${VERSIONS_SUFFIX}: every version, newest first; with ?from=N&to=M the unified diff of the two`),
);

export type CatalogVersions = v.InferOutput<typeof catalogVersionsAnswer>;

/**
 * Every version of a catalog path, newest first (404 when none); with `from` and `to` also a
 * unified line diff of the two versions' content (400 when only one is given, 404 when one is absent).
 */
export async function catalogVersions(q: Queryable, path: string, from: number | undefined, to: number | undefined): Promise<CatalogVersions> {
  // One of the two alone is a request without sense: refused before any read, naming the one missing.
  if ((from === undefined) !== (to === undefined)) throw new ServiceError('bad_request', `${from === undefined ? 'from' : 'to'}: a diff needs both ?from= and ?to=`);
  const rows = await listCatalogVersions(q, path);
  if (rows.length === 0) throw notFound(`catalog path ${path}`);
  const out: CatalogVersions = { path, versions: rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() })) };
  if (from === undefined || to === undefined) return out;
  const [a, b] = await Promise.all([getCatalogEntry(q, path, from), getCatalogEntry(q, path, to)]);
  if (!a) throw notFound(`${path} version ${from}`);
  if (!b) throw notFound(`${path} version ${to}`);
  out.diff = { from, to, unified: unifiedDiff(a.content, b.content, `${path}@${from}`, `${path}@${to}`) };
  return out;
}
