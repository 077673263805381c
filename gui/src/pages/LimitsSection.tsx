import { useEffect, useRef, useState } from 'react';
import { api, apiOrNull, type Limit, type LimitDetail } from '../api.ts';
import { isInlineLimit, keyText, rateText, tokensText } from '../flow-text.ts';
import { usePoll } from '../hooks.ts';
import { useCan } from '../session.ts';
import { ErrorBox, Section, formatAge, formatTime } from '../ui.tsx';

// Keys fill and empty as executions are admitted and commands claimed: the counts follow them.
const LIMITS_REFRESH_MS = 2_000;
// The busiest keys of the selected limit shown (GET /api/limits/{name}?keys=N; the API's default).
const KEYS_SHOWN = 100;

/**
 * Flow control's limits (DESIGN.md "Flow control"): every limit with what its keys hold in all,
 * the selected one's keys (running, queued, waiting, tokens), and for operators a form that sets a
 * limit's concurrency and rate, and deletes it. `selected` is the route's `limit`; nothing is shown
 * on a server without /api/limits.
 */
export function Limits({ selected, select }: { selected: string | null; select: (name: string | null) => void }) {
  const canOperate = useCan('operator');
  // An object a time: the same words twice ("Limit tenant changed.") are said, and focused, again.
  const [done, setDone] = useState<{ text: string }>();
  // Save of a new name and Delete choose another limit, and the form (keyed by it) is made anew:
  // the button pressed goes, and focus fell to the page's body. It goes to what was done instead.
  const doneText = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (done && (!document.activeElement || document.activeElement === document.body)) doneText.current?.focus();
  }, [done]);
  const list = usePoll((signal) => apiOrNull<{ limits: Limit[]; count: number }>('/limits', { signal }), LIMITS_REFRESH_MS, []);
  if (list.data === null) return null;
  const limits = list.data?.limits ?? [];
  const chosen = limits.find((l) => l.name === selected);
  return (
    <Section title="Limits" actions={<span className="muted">{list.loading && !list.data ? 'loading…' : 'live'}</span>}>
      <ErrorBox error={list.error} />
      {limits.length ? (
        <table className="list limits">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Concurrency</th>
              <th scope="col">Rate</th>
              <th scope="col">Keys</th>
              <th scope="col">Running</th>
              <th scope="col">Queued</th>
              <th scope="col">Waiting</th>
            </tr>
          </thead>
          <tbody>
            {limits.map((l) => (
              <tr key={l.name} className={l.name === selected ? 'selected' : undefined} data-limit={l.name}>
                <th scope="row">
                  <button type="button" className="link" aria-pressed={l.name === selected} onClick={() => select(l.name === selected ? null : l.name)}>
                    {l.name}
                  </button>{' '}
                  <LimitBadge limit={l} />
                </th>
                <td>{l.concurrency ?? '—'}</td>
                <td>{rateText(l.rate)}</td>
                <td>{l.keys}</td>
                <td data-count="running">{l.running}</td>
                <td data-count="queued">{l.queued}</td>
                <td data-count="waiting">{l.waiting}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : list.data ? (
        <p className="muted">No limits. A playbook's <code>concurrency</code> or a task's <code>limit</code> names one; an operator defines it here or with PUT /api/limits/{'{name}'}.</p>
      ) : null}
      {selected ? <LimitKeys name={selected} limit={chosen} /> : null}
      {canOperate ? (
        <LimitForm
          key={selected ?? ''}
          limit={chosen}
          name={selected}
          done={(message, name) => {
            setDone({ text: message });
            list.reload();
            select(name);
          }}
        />
      ) : null}
      {done ? (
        <p role="status" tabIndex={-1} ref={doneText}>
          {done.text}
        </p>
      ) : null}
    </Section>
  );
}

/** Why a limit is not an ordinary named one: a name playbooks use that nobody defined, or a playbook's own. */
function LimitBadge({ limit }: { limit: Limit }) {
  if (isInlineLimit(limit.name)) return <span className="badge">inline: playbook {limit.name.slice(1)}</span>;
  if (!limit.defined) return <span className="badge s-undefined" title="named by a playbook or task, but no limit of this name is defined: its executions stay queued and its commands wait until one is">not defined: its work waits</span>;
  return null;
}

/** The selected limit's busiest keys, live. */
function LimitKeys({ name, limit }: { name: string; limit: Limit | undefined }) {
  const detail = usePoll((signal) => api<LimitDetail>(`/limits/${encodeURIComponent(name)}?keys=${KEYS_SHOWN}`, { signal }), LIMITS_REFRESH_MS, [name]);
  const keys = detail.data?.key_list ?? [];
  const total = detail.data?.keys ?? limit?.keys ?? 0;
  return (
    <section className="limit-keys" aria-label={`Keys of ${name}`}>
      <h3>Keys of {name}</h3>
      <ErrorBox error={detail.error} />
      {detail.data ? (
        <p className="muted">
          {detail.data.defined
            ? `${detail.data.concurrency !== null ? `at most ${detail.data.concurrency} running per key` : 'no concurrency bound'}; ${detail.data.rate ? `rate ${rateText(detail.data.rate)} per key` : 'no rate'}. Defined ${formatTime(detail.data.created_at)}${detail.data.updated_at !== detail.data.created_at ? `, changed ${formatTime(detail.data.updated_at)}` : ''}.`
            : isInlineLimit(name)
              ? `The concurrency: {limit: N} of playbook ${name.slice(1)}: N of its executions run at once per key.`
              : 'Not defined: its executions stay queued and its commands wait until a limit of this name is.'}
          {total > keys.length ? ` The ${keys.length} busiest of ${total} keys.` : ''}
        </p>
      ) : null}
      {keys.length ? (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Running</th>
              <th scope="col">Queued</th>
              <th scope="col">Waiting</th>
              <th scope="col">Tokens</th>
              <th scope="col">Last admitted or claimed</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.key} data-key={k.key}>
                <th scope="row">
                  <code>{keyText(k.key)}</code>
                </th>
                <td data-count="running">{k.running}</td>
                <td data-count="queued">{k.queued}</td>
                <td data-count="waiting">{k.waiting}</td>
                <td data-count="tokens">{tokensText(k.tokens)}</td>
                <td title={formatTime(k.served_at)}>{k.served_at ? formatAge(k.served_at) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : detail.data ? (
        <p className="muted">No key of {name} holds or waits for anything.</p>
      ) : null}
    </section>
  );
}

type FormState = { name: string; concurrency: string; rateLimit: string; period: string; burst: string };

const formOf = (name: string | null, l: Limit | undefined): FormState => ({
  name: name && !isInlineLimit(name) ? name : '',
  concurrency: l?.concurrency?.toString() ?? '',
  rateLimit: l?.rate?.limit.toString() ?? '',
  period: l?.rate?.period_seconds.toString() ?? '1',
  burst: l?.rate && l.rate.burst !== l.rate.limit ? l.rate.burst.toString() : '',
});

/** PUT /api/limits/{name}'s body from the form, or what is wrong with it. */
function bodyOf(f: FormState): { body: { concurrency?: number; rate?: { limit: number; period_seconds: number; burst?: number } } } | { problem: string } {
  const whole = (text: string, field: string) => (/^\d+$/.test(text.trim()) && Number(text) >= 1 ? Number(text) : `${field} must be a whole number of at least 1`);
  const body: { concurrency?: number; rate?: { limit: number; period_seconds: number; burst?: number } } = {};
  if (f.concurrency.trim()) {
    const c = whole(f.concurrency, 'Concurrency');
    if (typeof c === 'string') return { problem: c };
    body.concurrency = c;
  }
  if (f.rateLimit.trim()) {
    const limit = whole(f.rateLimit, 'Rate');
    if (typeof limit === 'string') return { problem: limit };
    const period = Number(f.period);
    if (!(period > 0)) return { problem: 'Per (seconds) must be more than 0' };
    body.rate = { limit, period_seconds: period };
    if (f.burst.trim()) {
      const burst = whole(f.burst, 'Burst');
      if (typeof burst === 'string') return { problem: burst };
      body.rate.burst = burst;
    }
  }
  if (body.concurrency === undefined && body.rate === undefined) return { problem: 'A limit needs a concurrency, a rate or both' };
  return { body };
}

/**
 * Operators set a limit (a new one, or the selected one with its values filled in: again whenever
 * it changes, until edited) and delete the selected one. `done` says what happened and which limit
 * to select.
 */
function LimitForm({ name, limit, done }: { name: string | null; limit: Limit | undefined; done: (message: string, select: string | null) => void }) {
  const [form, setForm] = useState<FormState>(() => formOf(name, limit));
  const [edited, setEdited] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (!edited) setForm(formOf(name, limit));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [limit?.updated_at, limit?.defined]);
  const built = bodyOf(form);
  const target = form.name.trim();
  const set = (field: keyof FormState) => (e: React.ChangeEvent<HTMLInputElement>) => {
    setEdited(true);
    setForm({ ...form, [field]: e.target.value });
  };
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!('body' in built) || !target) return;
    setError(undefined);
    try {
      const out = await api<Limit & { created: boolean }>(`/limits/${encodeURIComponent(target)}`, { method: 'PUT', body: built.body });
      setEdited(false);
      done(`Limit ${out.name} ${out.created ? 'created' : 'changed'}.`, out.name);
    } catch (err) {
      setError(err);
    }
  };
  const remove = async () => {
    if (!name || !confirm(`Delete limit ${name}? Playbooks that name it wait until it is defined again.`)) return;
    setError(undefined);
    try {
      await api(`/limits/${encodeURIComponent(name)}`, { method: 'DELETE' });
      done(`Limit ${name} deleted.`, null);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="limit-form" aria-label="Set limit" onSubmit={submit}>
      <h3>{limit?.defined ? `Change ${limit.name}` : name && !isInlineLimit(name) ? `Define ${name}` : 'Define a limit'}</h3>
      <div className="filters">
        <label>
          Name
          <input value={form.name} onChange={set('name')} required pattern="[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}" placeholder="tenant" size={14} />
        </label>
        <label>
          Concurrency (per key)
          <input type="number" min={1} step={1} value={form.concurrency} onChange={set('concurrency')} placeholder="none" size={8} />
        </label>
        <label>
          Rate (per key)
          <input type="number" min={1} step={1} value={form.rateLimit} onChange={set('rateLimit')} placeholder="none" size={8} />
        </label>
        <label>
          Per (seconds)
          <input type="number" min={0.001} step="any" value={form.period} onChange={set('period')} size={6} />
        </label>
        <label>
          Burst
          <input type="number" min={1} step={1} value={form.burst} onChange={set('burst')} placeholder="= rate" size={6} />
        </label>
        <button type="submit" disabled={!('body' in built) || !target}>
          Save
        </button>
        {limit?.defined ? (
          <button type="button" className="danger" onClick={() => void remove()}>
            Delete {limit.name}
          </button>
        ) : null}
      </div>
      {'problem' in built && (form.concurrency || form.rateLimit) ? <p className="muted">{built.problem}</p> : null}
      <ErrorBox error={error} />
    </form>
  );
}
