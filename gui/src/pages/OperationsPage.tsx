import { useState } from 'react';
import { api, type CatalogEntry } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { href } from '../route.ts';
import { useCan } from '../session.ts';
import { ErrorBox, Section, StatusBadge, formatAge, formatTime } from '../ui.tsx';

type Pool = { name: string; status: string; capacity: number; labels: unknown; heartbeat_at: string; created_at: string };
type Credential = { id: string; name: string; type: string; description?: string | null; tags?: string[]; created_at: string; updated_at: string };
type KeychainEntry = { keychain_name: string; cache_key: string; scope_type: string; credential_type: string; expires_at: string; auto_renew: boolean; access_count: number };
type Cleanup = { cancelled_count: number; execution_ids: number[]; message: string };

// Worker heartbeats arrive every few seconds; the table follows them.
const POOLS_REFRESH_MS = 5_000;

/** Workers, credentials (never their data), keychain entries (never their values), stuck executions. */
export function OperationsPage() {
  return (
    <>
      <Pools />
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
  const [found, setFound] = useState<Cleanup | null>(null);
  const [done, setDone] = useState<Cleanup | null>(null);
  const [error, setError] = useState<unknown>();
  const cleanup = async (dryRun: boolean) => {
    setError(undefined);
    try {
      const out = await api<Cleanup>('/executions/cleanup', { body: { older_than_minutes: minutes, dry_run: dryRun } });
      if (dryRun) {
        setFound(out);
        setDone(null);
      } else {
        setDone(out);
        setFound(null);
      }
    } catch (err) {
      setError(err);
    }
  };
  if (!canOperate) return null;
  return (
    <Section title="Stuck executions">
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void cleanup(true);
        }}
      >
        <label>
          Running for more than (minutes)
          <input type="number" min={1} value={minutes} onChange={(e) => setMinutes(Math.max(1, Number(e.target.value) || 1))} />
        </label>
        <button type="submit">Find (dry run)</button>
      </form>
      <ErrorBox error={error} />
      {found ? (
        <div className="confirm" role="status">
          <p>
            {found.execution_ids.length === 0 ? `No execution has been running for more than ${minutes} minutes.` : `${found.execution_ids.length} execution${found.execution_ids.length === 1 ? '' : 's'} would be cancelled: `}
            {found.execution_ids.map((id) => (
              <a key={id} href={href(['executions', id])} className="chip">
                {id}
              </a>
            ))}
          </p>
          {found.execution_ids.length ? (
            <button type="button" className="danger" onClick={() => void cleanup(false)}>
              Cancel these {found.execution_ids.length}
            </button>
          ) : null}
        </div>
      ) : null}
      {done ? <p role="status">{done.message}</p> : null}
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

function Credentials() {
  const canAdmin = useCan('admin');
  const list = usePoll((signal) => api<{ credentials: Credential[] }>('/credentials', { signal }), null, []);
  const [form, setForm] = useState({ name: '', type: 'bearer', description: '', data: '{\n  "token": ""\n}' });
  const [error, setError] = useState<unknown>();
  let dataProblem: string | null = null;
  try {
    const d: unknown = JSON.parse(form.data);
    if (!d || typeof d !== 'object' || Array.isArray(d)) dataProblem = 'data must be a JSON object';
  } catch (e) {
    dataProblem = e instanceof Error ? e.message : String(e);
  }
  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setError(undefined);
    try {
      await api('/credentials', { body: { name: form.name, type: form.type, description: form.description || undefined, data: JSON.parse(form.data) } });
      // The data leaves the form once sent: the console never shows it again.
      setForm({ ...form, name: '', description: '', data: '{}' });
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async (name: string) => {
    if (!confirm(`Delete credential ${name}?`)) return;
    try {
      await api(`/credentials/${encodeURIComponent(name)}`, { method: 'DELETE' });
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Section title="Credentials">
      <ErrorBox error={list.error ?? error} />
      <table className="list">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Description</th>
            <th scope="col">Created</th>
            <th scope="col">Updated</th>
            {canAdmin ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {list.data?.credentials.map((c) => (
            <tr key={c.id}>
              <td>{c.name}</td>
              <td>{c.type}</td>
              <td>{c.description}</td>
              <td>{formatTime(c.created_at)}</td>
              <td>{formatTime(c.updated_at)}</td>
              {canAdmin ? (
                <td>
                  <button type="button" className="danger" onClick={() => void remove(c.name)}>
                    Delete
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      {canAdmin ? (
        <form className="stack" onSubmit={create} aria-label="New credential">
          <h3>New credential</h3>
          <label>
            Name <input required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} placeholder="api_auth" />
          </label>
          <label>
            Type{' '}
            <select value={form.type} onChange={(e) => setForm({ ...form, type: e.target.value })}>
              {['bearer', 'basic', 'api_key', 'oauth2', 'postgres', 'service_account', 'custom'].map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </label>
          <label>
            Description <input value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
          </label>
          <label>
            Data (JSON; sealed by the server, never shown again)
            <textarea rows={4} className="code secret" value={form.data} onChange={(e) => setForm({ ...form, data: e.target.value })} spellCheck={false} autoComplete="off" />
          </label>
          {dataProblem ? <p className="error">{dataProblem}</p> : null}
          <button type="submit" disabled={dataProblem !== null || !form.name}>
            Create
          </button>
        </form>
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
