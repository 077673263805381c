import * as v from 'valibot';
import type { PlaybookCache } from '../../actors/playbook-cache.ts';
import { compileStatechart, type StatechartJson } from '../../machines/playbook-statechart.ts';
import { playbookWarnings, registrationPaths, type PathsReport } from '../../machines/simulate-playbook.ts';
import { childTaskWarnings } from '../dsl/child-task-warnings.ts';
import type { NormalizedPlaybook } from '../dsl/parse-playbook.ts';
import { getCatalogEntry } from '../db/catalog.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import { notFound, ServiceError } from '../errors.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

/** The path suffix that asks the catalog for a playbook's statechart instead of its text. */
export const STATECHART_SUFFIX = '/statechart';

/** StatechartJson as the document shows it: an xstate machine config (its nodes are open-ended). */
export const statechartAnswer = v.pipe(
  v.looseObject({ id: v.string(), initial: v.string(), states: ownKeysRecord(v.string(), v.unknown()) }),
  v.description(`{path}${STATECHART_SUFFIX}: the playbook's statechart, an xstate machine config (one state per step with meta.step, arcs with meta.when)`),
);

/** The statechart of the newest (or given) version of a playbook; 404 when there is none, or it is an MCP server document. */
export async function playbookStatechart(q: Queryable, cache: PlaybookCache, path: string, version: number | undefined): Promise<StatechartJson> {
  const row = await getCatalogEntry(q, path, version);
  if (!row) throw notFound(version ? `playbook ${path} version ${version}` : `playbook ${path}`);
  // An MCP server document shares the catalog, but has no workflow to draw.
  if (row.kind === 'mcp') throw new ServiceError('not_found', `${path}${version ? ` version ${version}` : ''} is an MCP server document (kind Mcp): it has no statechart`);
  // Compiled once per catalog version (the cache holds the playbook the chart is cached on).
  return compileStatechart(cache.compile(row).playbook);
}

/**
 * What registration warns about (the playbook is stored either way): worker-only fields of
 * playbook tasks, which have no effect there; steps no simulated path reaches, paths that end
 * neither completed nor failed (none of these when that check itself cannot run).
 */
export function registrationWarnings(pb: NormalizedPlaybook, report: PathsReport | null = pathsOrNull(pb)): string[] {
  const children = childTaskWarnings(pb);
  if (!report) return children;
  try {
    return [...children, ...playbookWarnings(pb, report)];
  } catch {
    return children;
  }
}

/** The simulated paths registration judges (machines/simulate-playbook.ts), or null when that check cannot run. */
export function pathsOrNull(pb: NormalizedPlaybook): PathsReport | null {
  try {
    return registrationPaths(pb);
  } catch {
    return null;
  }
}
