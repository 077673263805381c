import { memo, useEffect, useRef, useState } from 'react';
import { EXECUTION_STATUSES } from '../../../machines/statuses.ts';
import { api, type Execution } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { href, navigate } from '../route.ts';
import { ErrorBox, Section, StatusBadge, formatDuration, formatTime } from '../ui.tsx';

// next_cursor is opaque (start time and id of the page's last row); counts: per status, for the other filters.
type Page = { executions: Execution[]; next_cursor: string | null; counts?: Record<string, number> };

const STATUSES = ['', ...EXECUTION_STATUSES] as const;
const PAGE_SIZE = 50;
// The first page is read again this often: new executions and progress appear without a reload.
const LIVE_REFRESH_MS = 2_000;

// The list's filters as GET /api/executions names them, kept in the page's URL under the same
// names: the playbook path (exact, or its prefix), `q` (an execution id exactly, or text anywhere
// in the path), the trigger, the caller, the parent, the labels (`label` repeated, key:value, all
// of them; typed in one field) and the start time's range (ISO times).
const TEXT_FILTERS = ['path', 'path_prefix', 'q', 'trigger', 'requested_by', 'parent', 'label'] as const;
const TIME_FILTERS = ['started_after', 'started_before'] as const;
const FILTERS = ['status', ...TEXT_FILTERS, ...TIME_FILTERS] as const;
type FilterName = (typeof FILTERS)[number];
type Filters = Record<FilterName, string>;

const LABELS: Record<(typeof TEXT_FILTERS)[number] | (typeof TIME_FILTERS)[number], [string, string]> = {
  path: ['Playbook path', 'examples/hello'],
  path_prefix: ['Path prefix', 'billing/'],
  q: ['Search', 'id or path text'],
  trigger: ['Trigger', 'nightly'],
  requested_by: ['Started by', 'alice'],
  parent: ['Parent', 'execution id'],
  label: ['Labels', 'tenant:acme, tier:gold'],
  started_after: ['Started after', ''],
  started_before: ['Started before', ''],
};

/**
 * The labels typed in one field, each key:value: a comma or space starts another only before a
 * label key and its colon (`tier:gold, tenant:globex inc` is two), so a value may hold spaces.
 */
function labelsOf(text: string): string[] {
  return text
    .split(/[,\s]+(?=[A-Za-z_][A-Za-z0-9_.-]*:)/)
    .map((l) => l.replace(/^[,\s]+|[,\s]+$/g, ''))
    .filter(Boolean);
}

const listUrl = (filters: Filters, cursor?: string) => {
  const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
  for (const name of FILTERS) if (name !== 'label' && filters[name]) q.set(name, filters[name]);
  for (const label of labelsOf(filters.label)) q.append('label', label);
  if (cursor !== undefined) q.set('cursor', cursor);
  return `/executions?${q}`;
};

// A datetime-local input shows local time without a zone; the list takes ISO with one.
const pad = (n: number) => String(n).padStart(2, '0');
function localInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
function isoOfLocal(local: string): string {
  const d = new Date(local);
  return local && !Number.isNaN(d.getTime()) ? d.toISOString() : '';
}

function filtersOf(query: URLSearchParams): Filters {
  const filters: Filters = { status: '', path: '', path_prefix: '', q: '', trigger: '', requested_by: '', parent: '', label: '', started_after: '', started_before: '' };
  for (const name of FILTERS) filters[name] = name === 'label' ? query.getAll(name).join(', ') : (query.get(name) ?? '');
  return filters;
}

/** Executions, newest first by start time: filtered (status, path or its prefix, trigger, caller, parent, labels, start range), searched by id or path text, paged by cursor, the first page live. */
export function ExecutionsPage({ query }: { query: URLSearchParams }) {
  const filters = filtersOf(query);
  const { status } = filters;
  const [draft, setDraft] = useState<Filters>(() => ({ ...filters, started_after: localInput(filters.started_after), started_before: localInput(filters.started_before) }));
  const key = FILTERS.map((name) => filters[name]).join('|');
  const first = usePoll((signal) => api<Page>(listUrl(filters), { signal }), LIVE_REFRESH_MS, [key]);
  const filtered = FILTERS.some((name) => filters[name]);
  const go = (next: Filters) => navigate(href(['executions'], { ...next, label: labelsOf(next.label) }));
  // Older pages, loaded on demand; they are history and are not refreshed.
  const [older, setOlder] = useState<{ key: string; rows: Execution[]; cursor: string | null; error?: unknown }>({ key: '', rows: [], cursor: null });
  const olderRows = older.key === key ? older.rows : [];
  const cursor = older.key === key && older.rows.length ? older.cursor : (first.data?.next_cursor ?? null);
  // The last page's "Older executions" goes as its rows come, and focus fell to the page's body:
  // it goes to the first of them instead.
  const body = useRef<HTMLTableSectionElement>(null);
  const focusRow = useRef<number | null>(null);
  // Run on `older` alone: an earlier render's effect, flushed as this update starts, would take
  // the row before it is drawn.
  useEffect(() => {
    if (focusRow.current === null) return;
    body.current?.rows[focusRow.current]?.querySelector('a')?.focus();
    focusRow.current = null;
  }, [older]);
  const loadOlder = async () => {
    if (cursor === null) return;
    try {
      const page = await api<Page>(listUrl(filters, cursor));
      if (page.next_cursor === null && page.executions.length) focusRow.current = rows.length;
      setOlder({ key, rows: [...olderRows, ...page.executions], cursor: page.next_cursor });
    } catch (error) {
      setOlder({ ...older, error });
    }
  };
  const firstRows = first.data?.executions ?? [];
  const onFirst = new Set(firstRows.map((f) => f.execution_id));
  const rows = [...firstRows, ...olderRows.filter((r) => !onFirst.has(r.execution_id))];
  return (
    <Section title="Executions" actions={<span className="muted">{first.loading && !first.data ? 'loading…' : 'live'}</span>}>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          const text = Object.fromEntries(TEXT_FILTERS.map((name) => [name, draft[name].trim()]));
          go({ ...filters, ...text, started_after: isoOfLocal(draft.started_after), started_before: isoOfLocal(draft.started_before) });
        }}
      >
        <label>
          Status
          <select value={status} onChange={(e) => go({ ...filters, status: e.target.value })}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
                {first.data?.counts && s ? ` (${first.data.counts[s] ?? 0})` : ''}
              </option>
            ))}
          </select>
        </label>
        {TEXT_FILTERS.map((name) => (
          <label key={name}>
            {LABELS[name][0]}
            <input type={name === 'q' ? 'search' : 'text'} inputMode={name === 'parent' ? 'numeric' : undefined} value={draft[name]} onChange={(e) => setDraft({ ...draft, [name]: e.target.value })} placeholder={LABELS[name][1]} />
          </label>
        ))}
        {TIME_FILTERS.map((name) => (
          <label key={name}>
            {LABELS[name][0]}
            <input type="datetime-local" value={draft[name]} onChange={(e) => setDraft({ ...draft, [name]: e.target.value })} />
          </label>
        ))}
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={first.error ?? older.error} />
      <table className="list">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Playbook</th>
            <th scope="col">Status</th>
            <th scope="col">Progress</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody ref={body}>
          {rows.map((e) => (
            <ExecutionRow key={e.execution_id} e={e} />
          ))}
        </tbody>
      </table>
      {first.data && rows.length === 0 ? <p className="muted">No executions{filtered ? ' match' : ' yet'}.</p> : null}
      {cursor !== null ? (
        <button type="button" onClick={loadOlder}>
          Older executions
        </button>
      ) : null}
    </Section>
  );
}

/**
 * One row. Memoised on the execution object: the live refresh replaces only the first page's
 * objects, so the loaded older pages (kept as they were) are not rendered again every 2 s; without
 * this each refresh re-rendered every loaded row (165 ms main-thread tasks at 300 rows).
 */
const ExecutionRow = memo(function ExecutionRow({ e }: { e: Execution }) {
  return (
    <tr>
      <td>
        <a href={href(['executions', e.execution_id])}>{e.execution_id}</a>
      </td>
      <td>{e.path}</td>
      <td>
        <StatusBadge status={e.status} />
      </td>
      <td>
        <progress max={100} value={e.progress} aria-label={`progress ${e.progress}%`} /> {e.progress}%
      </td>
      <td>{formatTime(e.started_at)}</td>
      <td>{formatDuration(new Date(e.finished_at ?? Date.now()).getTime() - new Date(e.started_at).getTime())}</td>
    </tr>
  );
});
