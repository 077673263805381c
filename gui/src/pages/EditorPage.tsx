import { load } from 'js-yaml';
import { useEffect, useMemo, useState } from 'react';
import { isObject } from '../../../src/objects.ts';
import { ApiError, api, apiOrNull, encodePath, type CatalogEntry } from '../api.ts';
import { graphFromYaml } from '../graph/model.ts';
import { useFocusBack } from '../hooks.ts';
import { StepGraphView } from '../graph/StepGraphView.tsx';
import { href, navigate, useRoute } from '../route.ts';
import { ErrorBox, Section } from '../ui.tsx';
import { lineOfPath } from '../yaml-lines.ts';
import { YamlView } from '../YamlView.tsx';

const TEMPLATE = `apiVersion: svc/v1
kind: Playbook
metadata:
  name: my_playbook
  path: examples/my_playbook
workload:
  who: world
workflow:
  - step: start
    tool:
      - name: greet
        kind: shell
        command: "echo hello {{ workload.who }}"
    next: done
  - step: done
`;

type Problem = { path: string; message: string; line: number; column: number | null };
/** A registration's answer: the entry, and what the server warns of in it (steps no path reaches, fields with no effect). */
type Registered = CatalogEntry & { warnings?: string[] };

/**
 * Problems of a refused registration, each at its line of the text sent: the line the server
 * names (its parser knows where each node is), else the one its path points to.
 */
function problemsOf(error: unknown, text: string): Problem[] | null {
  if (!(error instanceof ApiError) || error.status !== 400 || !error.detail || typeof error.detail !== 'object') return null;
  const d = error.detail as { problems?: { path: string; message: string; line?: unknown; column?: unknown }[]; errors?: string[] };
  const list = d.problems ?? (d.errors ?? []).map((e) => ({ path: e.split(':')[0], message: e.slice(e.indexOf(':') + 1).trim() }));
  return list.map((p) => ({
    path: p.path,
    message: p.message,
    line: 'line' in p && typeof p.line === 'number' && Number.isInteger(p.line) && p.line >= 1 ? p.line : lineOfPath(text, p.path === '$' ? p.message : p.path),
    // The column tells which of several fields on one line (`{ name: a, kind: shell, bogus: 1 }`) is meant.
    column: 'column' in p && typeof p.column === 'number' && Number.isInteger(p.column) && p.column >= 1 ? p.column : null,
  }));
}

/**
 * How the document is registered: an MCP server document (`kind: Mcp`) and an agent
 * (`metadata.agent: true`) as those resources, anything else (text that does not parse too) as a
 * playbook, whose validation then says what is wrong.
 */
function resourceTypeOf(text: string): 'playbook' | 'agent' | 'mcp' {
  let doc: unknown;
  try {
    doc = load(text);
  } catch {
    return 'playbook';
  }
  if (!isObject(doc)) return 'playbook';
  if (doc.kind === 'Mcp') return 'mcp';
  return isObject(doc.metadata) && doc.metadata.agent === true ? 'agent' : 'playbook';
}

/** Register a new playbook, agent or MCP server, or a new version of one: the server validates, its problems are shown at their lines. */
export function EditorPage({ path }: { path?: string }) {
  const { query } = useRoute();
  const [text, setText] = useState(path ? '' : TEMPLATE);
  const [loading, setLoading] = useState(Boolean(path));
  const [error, setError] = useState<unknown>();
  const [problems, setProblems] = useState<Problem[] | null>(null);
  const [busy, setBusy] = useState(false);
  const holdFocus = useFocusBack(busy);
  const [missing, setMissing] = useState(false);
  // A registration the server accepted with warnings: shown here (the entry's page has no place for
  // them), with a link on, instead of leaving for the entry at once.
  const [warned, setWarned] = useState<{ path: string; version: number; warnings: string[] } | null>(null);
  const version = query.get('version');
  useEffect(() => {
    if (!path) return;
    setMissing(false);
    void apiOrNull<CatalogEntry>(`/catalog/playbook/${encodePath(path)}${version ? `?version=${version}` : ''}`)
      // A version the path does not have is said, not replaced by the example (registering that
      // would make a playbook at the example's path).
      .then((entry) => (entry ? setText(entry.content ?? TEMPLATE) : version ? setMissing(true) : setText(TEMPLATE)))
      .catch(setError)
      .finally(() => setLoading(false));
  }, [path, version]);
  const graph = useMemo(() => graphFromYaml(text), [text]);
  const marks = useMemo(() => {
    const m = new Map<number, string[]>();
    for (const p of problems ?? []) m.set(p.line, [...(m.get(p.line) ?? []), `${p.column ? `column ${p.column}: ` : ''}${p.path}: ${p.message}`]);
    return m;
  }, [problems]);

  const register = async () => {
    holdFocus();
    setBusy(true);
    setError(undefined);
    setWarned(null);
    try {
      const type = resourceTypeOf(text);
      // Edit registers a version of the path it edits: a playbook stored at a path of the
      // request's own (`POST /api/catalog/playbook {content, path}`) need not say it in
      // metadata.path, and without it went to the document's (or was refused, having none).
      const out =
        type === 'playbook'
          ? await api<Registered>('/catalog/playbook', { body: path ? { content: text, path } : { content: text } })
          : await api<Registered>('/catalog/register', { body: { content: text, resource_type: type } });
      setProblems(null);
      if (out.warnings?.length) setWarned({ path: out.path, version: out.version, warnings: out.warnings });
      else navigate(href(['catalog', 'entry', out.path], { version: String(out.version) }));
    } catch (err) {
      const found = problemsOf(err, text);
      setProblems(found);
      if (!found) setError(err);
    } finally {
      setBusy(false);
    }
  };
  if (loading) return <p>Loading…</p>;
  if (missing && path) {
    return (
      <p className="error" role="alert">
        {path} has no version {version}. <a href={href(['catalog', 'edit', path])}>Edit its newest version</a>.
      </p>
    );
  }
  return (
    <>
      <Section
        title={path ? `Edit ${path}` : 'Register a playbook'}
        actions={
          <div className="actions">
            <button type="button" onClick={register} disabled={busy}>
              Register
            </button>
            <a className="button" href={href(['catalog'])}>
              Back
            </a>
          </div>
        }
      >
        <div className="editor">
          <label htmlFor="yaml-editor">Playbook YAML</label>
          <textarea
            id="yaml-editor"
            className="code"
            rows={Math.min(40, Math.max(16, text.split('\n').length + 1))}
            value={text}
            onChange={(e) => setText(e.target.value)}
            spellCheck={false}
            aria-describedby="problems"
            onKeyDown={(e) => {
              // Tab indents (two spaces); Escape then Tab leaves the editor, as keyboards expect.
              if (e.key === 'Tab' && !e.shiftKey && !e.currentTarget.dataset.escaped) {
                e.preventDefault();
                const t = e.currentTarget;
                const at = t.selectionStart;
                setText(text.slice(0, at) + '  ' + text.slice(t.selectionEnd));
                requestAnimationFrame(() => t.setSelectionRange(at + 2, at + 2));
              }
              if (e.key === 'Escape') e.currentTarget.dataset.escaped = '1';
            }}
            onBlur={(e) => delete e.currentTarget.dataset.escaped}
          />
        </div>
        <div id="problems" aria-live="polite">
          {problems ? (
            <div className="problems" role="alert">
              <h3>The server refused it: {problems.length} problem{problems.length === 1 ? '' : 's'}</h3>
              <ul>
                {problems.map((p, i) => (
                  <li key={i} data-line={p.line} data-column={p.column ?? undefined}>
                    <strong>
                      line {p.line}
                      {p.column ? `, column ${p.column}` : ''}
                    </strong>{' '}
                    <code>{p.path}</code>: {p.message}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          {warned ? (
            <div className="warnings" role="status">
              <h3>
                Registered {warned.path} version {warned.version}, with {warned.warnings.length} warning{warned.warnings.length === 1 ? '' : 's'}
              </h3>
              <ul>
                {warned.warnings.map((w, i) => (
                  <li key={i}>{w}</li>
                ))}
              </ul>
              <a href={href(['catalog', 'entry', warned.path], { version: String(warned.version) })}>Open {warned.path} version {warned.version}</a>
            </div>
          ) : null}
          <ErrorBox error={error} />
        </div>
        {problems ? <YamlView text={text} marks={marks} /> : null}
      </Section>
      <Section title="Preview">{graph ? <StepGraphView graph={graph} /> : <p className="muted">Not a playbook with steps yet.</p>}</Section>
    </>
  );
}
