import { useState } from 'react';
import { apiOrNull, encodePath, type CatalogEntry } from '../api.ts';
import { loadPlaybookGraph } from '../graph/load-graph.ts';
import { Simulator } from '../graph/Simulator.tsx';
import { StepGraphView } from '../graph/StepGraphView.tsx';
import { usePoll } from '../hooks.ts';
import { href, navigate } from '../route.ts';
import { PlaybookTriggers } from './PlaybookTriggers.tsx';
import { RunForm } from './RunForm.tsx';
import { useCan } from '../session.ts';
import { ErrorBox, Section, formatTime } from '../ui.tsx';
import { YamlView, diffLines } from '../YamlView.tsx';

/** One catalog path: versions, the YAML (and its diff with the version before), the graph, a run form. */
export function CatalogEntryPage({ path, version }: { path: string; version: string | null }) {
  const canOperate = useCan('operator');
  const loaded = usePoll((signal) => loadPlaybookGraph(path, { version: version ? Number(version) : undefined, signal }), null, [path, version]);
  const newest = usePoll((signal) => apiOrNull<CatalogEntry>(`/catalog/playbook/${encodePath(path)}`, { signal }), null, [path]);
  const [showDiff, setShowDiff] = useState(false);
  const [simulating, setSimulating] = useState(false);
  const entry = loaded.data?.entry;
  const previous = usePoll(
    async (signal) => (showDiff && entry && entry.version > 1 ? apiOrNull<CatalogEntry>(`/catalog/playbook/${encodePath(path)}?version=${entry.version - 1}`, { signal }) : null),
    null,
    [showDiff, entry?.version, path],
  );
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (loaded.data === null) {
    // A version asked for that the path does not have (a stale link) is not a missing playbook.
    if (version && newest.data) {
      return (
        <p className="error" role="alert">
          {path} has no version {version}. <a href={href(['catalog', 'entry', path])}>Its newest is version {newest.data.version}</a>.
        </p>
      );
    }
    return <p>No playbook at {path}.</p>;
  }
  if (!entry) return <p>Loading {path}…</p>;
  const versions = Array.from({ length: newest.data?.version ?? entry.version }, (_, i) => i + 1).reverse();
  return (
    <>
      <Section
        title={path}
        actions={
          <div className="actions">
            <label>
              Version{' '}
              <select value={entry.version} onChange={(e) => navigate(href(['catalog', 'entry', path], { version: e.target.value }))}>
                {versions.map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
            </label>
            {canOperate ? <a className="button" href={href(['catalog', 'edit', path], { version: String(entry.version) })}>Edit</a> : null}
            <a className="button" href={href(['executions'], { path })}>Executions</a>
          </div>
        }
      >
        <p className="muted">
          {entry.kind}, catalog id {entry.catalog_id}, registered {formatTime(entry.created_at)}
        </p>
        {entry.kind === 'mcp' ? (
          // An MCP server document runs nothing itself: its lifecycle actions and tools are on the agents page.
          <p>
            An MCP server: deploy it and call its tools from <a href={href(['agents'])}>Agents</a>.
          </p>
        ) : canOperate ? (
          <RunForm entry={entry} key={entry.catalog_id} />
        ) : null}
      </Section>
      <PlaybookTriggers path={path} />
      <Section
        title="Statechart"
        actions={
          loaded.data?.graph ? (
            <label>
              <input type="checkbox" checked={simulating} onChange={(e) => setSimulating(e.target.checked)} /> Simulate in the browser
            </label>
          ) : null
        }
      >
        {!loaded.data?.graph ? <p className="muted">No steps to draw.</p> : simulating ? <Simulator graph={loaded.data.graph} yaml={entry.content ?? ""} key={entry.catalog_id} /> : <StepGraphView graph={loaded.data.graph} />}
      </Section>
      <Section
        title="YAML"
        actions={
          entry.version > 1 ? (
            <label>
              <input type="checkbox" checked={showDiff} onChange={(e) => setShowDiff(e.target.checked)} /> Diff with version {entry.version - 1}
            </label>
          ) : null
        }
      >
        {showDiff && previous.data ? (
          <pre className="diff" aria-label={`Diff from version ${entry.version - 1}`}>
            {diffLines(previous.data.content ?? '', entry.content ?? '').map((d, i) => (
              <span key={i} className={d.kind === '+' ? 'add' : d.kind === '-' ? 'del' : ''}>
                {d.kind} {d.text}
                {'\n'}
              </span>
            ))}
          </pre>
        ) : (
          <YamlView text={entry.content ?? ''} />
        )}
      </Section>
    </>
  );
}
