import { apiOrNull, encodePath, type CatalogEntry } from '../api.ts';
import { enrich, graphFromStatechart, graphFromYaml, type StepGraph } from './model.ts';

// How far back a catalog entry of an execution is looked for among the path's versions.
const MAX_VERSIONS_SEARCHED = 25;

/**
 * The catalog entry at `path` (`version`, or the one whose catalog_id is `catalogId`, or the
 * newest) with its step graph: the server's statechart when it has the route, else the YAML's arcs.
 */
export async function loadPlaybookGraph(path: string, opts: { version?: number; catalogId?: number; signal?: AbortSignal }): Promise<{ entry: CatalogEntry; graph: StepGraph | null } | null> {
  const at = (version?: number) => apiOrNull<CatalogEntry>(`/catalog/playbook/${encodePath(path)}${version ? `?version=${version}` : ''}`, { signal: opts.signal });
  let entry = await at(opts.version);
  if (!entry) return null;
  if (opts.catalogId !== undefined && entry.catalog_id !== opts.catalogId) {
    for (let v = entry.version - 1; v >= 1 && v > entry.version - MAX_VERSIONS_SEARCHED; v--) {
      const older = await at(v);
      if (older?.catalog_id === opts.catalogId) {
        entry = older;
        break;
      }
    }
  }
  const fromYaml = entry.content ? graphFromYaml(entry.content) : null;
  const chart = await apiOrNull<unknown>(`/catalog/playbook/${encodePath(path)}/statechart?version=${entry.version}`, { signal: opts.signal }).catch(() => null);
  const fromChart = chart ? graphFromStatechart(chart) : null;
  return { entry, graph: fromChart ? enrich(fromChart, fromYaml) : fromYaml };
}
