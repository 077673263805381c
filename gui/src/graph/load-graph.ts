import { apiOrNull, encodePath, type CatalogEntry } from '../api.ts';
import { enrich, graphFromStatechart, graphFromYaml, type StepGraph } from './model.ts';

// How far back a catalog entry of an execution is looked for, one version at a time, on a server
// without the versions listing.
const MAX_VERSIONS_SEARCHED = 25;

/** The version of `path` whose catalog_id is `catalogId`, from the versions listing (undefined: no such route; null: not listed). */
export async function versionOf(path: string, catalogId: number, signal?: AbortSignal): Promise<number | null | undefined> {
  const listed = await apiOrNull<{ versions: { version: number; catalog_id: number }[] }>(`/catalog/playbook/${encodePath(path)}/versions`, { signal });
  if (!listed) return undefined;
  return listed.versions.find((v) => v.catalog_id === catalogId)?.version ?? null;
}

/**
 * The catalog entry at `path` (`version`, or the one whose catalog_id is `catalogId`, or the
 * newest) with its step graph: the server's statechart when it has the route, else the YAML's arcs.
 */
export async function loadPlaybookGraph(path: string, opts: { version?: number; catalogId?: number; signal?: AbortSignal }): Promise<{ entry: CatalogEntry; graph: StepGraph | null } | null> {
  const at = (version?: number) => apiOrNull<CatalogEntry>(`/catalog/playbook/${encodePath(path)}${version ? `?version=${version}` : ''}`, { signal: opts.signal });
  let entry = await at(opts.version);
  if (!entry) return null;
  if (opts.catalogId !== undefined && entry.catalog_id !== opts.catalogId) {
    // An execution of any older version is drawn from its own version (a playbook edited often has
    // many), not the newest one's steps.
    const version = await versionOf(path, opts.catalogId, opts.signal);
    if (version) {
      entry = (await at(version)) ?? entry;
    } else if (version === undefined) {
      for (let v = entry.version - 1; v >= 1 && v > entry.version - MAX_VERSIONS_SEARCHED; v--) {
        const older = await at(v);
        if (older?.catalog_id === opts.catalogId) {
          entry = older;
          break;
        }
      }
    }
  }
  const fromYaml = entry.content ? graphFromYaml(entry.content) : null;
  const chart = await apiOrNull<unknown>(`/catalog/playbook/${encodePath(path)}/statechart?version=${entry.version}`, { signal: opts.signal }).catch(() => null);
  const fromChart = chart ? graphFromStatechart(chart) : null;
  return { entry, graph: fromChart ? enrich(fromChart, fromYaml) : fromYaml };
}
