import { useEffect, useRef, useState } from 'react';
import { api, type CatalogEntry } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { href, navigate } from '../route.ts';
import { useCan } from '../session.ts';
import { ErrorBox, Section, StatusBadge, formatAge, formatTime } from '../ui.tsx';
import { Credentials } from './CredentialsSection.tsx';
import { Limits } from './LimitsSection.tsx';

type Pool = { name: string; status: string; capacity: number; labels: unknown; heartbeat_at: string; created_at: string };
type KeychainEntry = { keychain_name: string; cache_key: string; scope_type: string; credential_type: string; expires_at: string; auto_renew: boolean; access_count: number };
type Cleanup = { cancelled_count: number; execution_ids: number[]; message: string };

// Worker heartbeats arrive every few seconds; the table follows them.
const POOLS_REFRESH_MS = 5_000;

/**
 * Workers, flow control's limits (`limit` in the query: the one whose keys are shown), stuck
 * executions, batch requests, credentials (never their data), keychain entries (never their values).
 */
export function OperationsPage({ query }: { query: URLSearchParams }) {
  return (
    <>
      <Pools />
      <Limits selected={query.get('limit')} select={(limit) => navigate(href(['operations'], { limit: limit ?? undefined }))} />
      <StuckExecutions />
      <BatchRequest />
      <Credentials />
      <Keychain />
    </>
  );
}

function Pools() {
  const pools = usePoll((signal) => api<{ pools: Pool[] }>('/worker/pools', { signal }), POOLS_REFRESH_MS, []);
  return (
    <Section title="Worker pools">
      <ErrorBox error={pools.error} />
      <table className="list">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Capacity</th>
            <th scope="col">Last heartbeat</th>
            <th scope="col">Registered</th>
          </tr>
        </thead>
        <tbody>
          {pools.data?.pools.map((p) => (
            <tr key={p.name}>
              <td>{p.name}</td>
              <td>
                <StatusBadge status={p.status} />
              </td>
              <td>{p.capacity}</td>
              <td title={formatTime(p.heartbeat_at)}>{formatAge(p.heartbeat_at)}</td>
              <td>{formatTime(p.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {pools.data?.pools.length === 0 ? <p className="muted">No worker pool has registered.</p> : null}
    </Section>
  );
}

function StuckExecutions() {
  const canOperate = useCan('operator');
  const [minutes, setMinutes] = useState(5);
  // What a dry run found, with the minutes it searched: "Cancel these N" sends those minutes, and
  // a change of the minutes (or a refused search) drops it rather than show or act on a stale list.
  const [found, setFound] = useState<(Cleanup & { minutes: number }) | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  // "Cancel these N" goes as it is pressed (the list it acts on is dropped): focus goes to what it
  // did once said (it fell to the page's body).
  const doneText = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (done && (!document.activeElement || document.activeElement === document.body)) doneText.current?.focus();
  }, [done]);
  const findStuck = async (olderThan: number) => {
    setError(undefined);
    try {
      const out = await api<Cleanup>('/executions/cleanup', { body: { older_than_minutes: olderThan, dry_run: true } });
      setFound({ ...out, minutes: olderThan });
      setDone(null);
    } catch (err) {
      setError(err);
      setFound(null);
    }
  };
  // Exactly the executions listed, one cancel each in the dry run's order (parents before their
  // children): the cleanup sent again would also take those that crossed the age since.
  const cancelListed = async (listed: Cleanup & { minutes: number }) => {
    setError(undefined);
    setFound(null);
    let cancelled = 0;
    const ended: string[] = [];
    try {
      for (const id of listed.execution_ids) {
        const out = await api<{ status: 'cancelled' | 'already_finished'; execution_status?: string }>(`/executions/${id}/cancel`, { body: { reason: `cleanup: running for more than ${listed.minutes} minute${listed.minutes === 1 ? '' : 's'}` } });
        // A child is usually cancelled already, by its parent's cancel a moment before.
        if (out.status === 'cancelled' || out.execution_status === 'cancelled') cancelled++;
        else ended.push(`${id} (${out.execution_status ?? 'ended'})`);
      }
    } catch (err) {
      setError(err);
    }
    setDone(`cancelled ${cancelled} execution${cancelled === 1 ? '' : 's'} of the ${listed.execution_ids.length} listed${ended.length ? `; had already ended: ${ended.join(', ')}` : ''}`);
  };
  if (!canOperate) return null;
  return (
    <Section title="Stuck executions">
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void findStuck(minutes);
        }}
      >
        <label>
          Running for more than (minutes)
          <input type="number" min={1} value={minutes} onChange={(e) => {
              setMinutes(Math.max(1, Number(e.target.value) || 1));
              setFound(null);
            }} />
        </label>
        <button type="submit">Find (dry run)</button>
      </form>
      <ErrorBox error={error} />
      {found ? (
        <div className="confirm" role="status">
          <p>
            {found.execution_ids.length === 0 ? `No execution has been running for more than ${found.minutes} minute${found.minutes === 1 ? '' : 's'}.` : `${found.execution_ids.length} execution${found.execution_ids.length === 1 ? '' : 's'} would be cancelled: `}
            {found.execution_ids.map((id) => (
              <a key={id} href={href(['executions', id])} className="chip">
                {id}
              </a>
            ))}
          </p>
          {found.execution_ids.length ? (
            <button type="button" className="danger" onClick={() => void cancelListed(found)}>
              Cancel these {found.execution_ids.length}
            </button>
          ) : null}
        </div>
      ) : null}
      {done ? (
        <p role="status" tabIndex={-1} ref={doneText}>
          {done}
        </p>
      ) : null}
    </Section>
  );
}

type BatchStatus = { request_id: string; execution_id: number; state: string; error_code: string | null; message: string | null; commands_generated: number | null; updated_at: string };
// A batch is processed within seconds; its status is followed at this pace until it ends.
const BATCH_REFRESH_MS = 500;

/** A batch request's status by its id (from a worker's 202), followed live until completed or failed. */
function BatchRequest() {
  const [input, setInput] = useState('');
  const [id, setId] = useState<string | null>(null);
  const [ended, setEnded] = useState(false);
  const status = usePoll(
    async (signal) => {
      if (!id) return null;
      const s = await api<BatchStatus>(`/events/batch/${encodeURIComponent(id)}/status`, { signal });
      if (s.state === 'completed' || s.state === 'failed') setEnded(true);
      return s;
    },
    ended ? null : BATCH_REFRESH_MS,
    [id, ended],
  );
  return (
    <Section title="Batch requests">
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setEnded(false);
          setId(input.trim() || null);
        }}
      >
        <label>
          Request id
          <input value={input} onChange={(e) => setInput(e.target.value)} placeholder="from the 202 answer" />
        </label>
        <button type="submit">Follow</button>
      </form>
      <ErrorBox error={status.error} />
      {status.data ? (
        <dl className="facts" aria-live="polite">
          <dt>State</dt>
          <dd>
            <StatusBadge status={status.data.state} /> {status.data.error_code ? `${status.data.error_code}: ${status.data.message ?? ''}` : ''}
          </dd>
          <dt>Execution</dt>
          <dd>
            <a href={href(['executions', status.data.execution_id])}>{status.data.execution_id}</a>
          </dd>
          <dt>Commands issued</dt>
          <dd>{status.data.commands_generated ?? '—'}</dd>
          <dt>Updated</dt>
          <dd>{formatTime(status.data.updated_at)}</dd>
        </dl>
      ) : null}
    </Section>
  );
}

function Keychain() {
  const canAdmin = useCan('admin');
  const catalog = usePoll((signal) => api<{ playbooks: CatalogEntry[] }>('/catalog/playbooks', { signal }), null, []);
  const [catalogId, setCatalogId] = useState<number | null>(null);
  const entries = usePoll(
    async (signal) => (catalogId === null ? null : api<{ entries: KeychainEntry[] }>(`/keychain/catalog/${catalogId}`, { signal })),
    null,
    [catalogId],
  );
  if (!canAdmin) return null;
  return (
    <Section title="Keychain">
      <label>
        Playbook{' '}
        <select value={catalogId ?? ''} onChange={(e) => setCatalogId(e.target.value ? Number(e.target.value) : null)}>
          <option value="">choose…</option>
          {catalog.data?.playbooks.map((p) => (
            <option key={p.catalog_id} value={p.catalog_id}>
              {p.path} v{p.version}
            </option>
          ))}
        </select>
      </label>
      <ErrorBox error={entries.error} />
      {entries.data ? (
        entries.data.entries.length ? (
          <table className="list">
            <thead>
              <tr>
                <th scope="col">Entry</th>
                <th scope="col">Scope</th>
                <th scope="col">Type</th>
                <th scope="col">Expires</th>
                <th scope="col">Auto renew</th>
                <th scope="col">Reads</th>
              </tr>
            </thead>
            <tbody>
              {entries.data.entries.map((k) => (
                <tr key={k.cache_key}>
                  <td title={k.cache_key}>{k.keychain_name}</td>
                  <td>{k.scope_type}</td>
                  <td>{k.credential_type}</td>
                  <td>{formatTime(k.expires_at)}</td>
                  <td>{k.auto_renew ? 'yes' : 'no'}</td>
                  <td>{k.access_count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No keychain entries for this playbook.</p>
        )
      ) : null}
    </Section>
  );
}
