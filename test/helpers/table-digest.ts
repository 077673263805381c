// What a refused request must leave as it was: every row of every table of the service's schemas,
// as a row count and a hash per table, read in one statement.
import type { Queryable } from '../../src/db/queryable.ts';

/**
 * A reader of `schema.table` → "rows:hash" for every table outside PostgreSQL's own schemas as
 * they are now (tables made later are not read). The hash sums each row's text hash: no sort, so
 * a read stays a few milliseconds on a test's small tables.
 */
export async function tableDigester(db: Queryable): Promise<() => Promise<Record<string, string>>> {
  const tables = await db.query<{ name: string }>(`SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables ORDER BY 1`);
  const sql = tables.rows
    .map((t, i) => `SELECT $${i + 1}::text AS name, count(*) || ':' || coalesce(sum(hashtext(r::text)::bigint), 0) AS digest FROM ${t.name} r`)
    .join(' UNION ALL ');
  const names = tables.rows.map((t) => t.name);
  return async () => Object.fromEntries((await db.query<{ name: string; digest: string }>(sql, names)).rows.map((r) => [r.name, r.digest]));
}

/** The tables whose digest differs between `before` and `after`. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => before[k] !== after[k]);
}
