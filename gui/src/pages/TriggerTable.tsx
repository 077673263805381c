import { useState } from 'react';
import { useFocusBack } from '../hooks.ts';
import { api, triggerUrl, type Trigger, type TriggerFired } from '../api.ts';
import { href } from '../route.ts';
import { useCan } from '../session.ts';
import { ErrorBox, StatusBadge, formatDuration, formatTime } from '../ui.tsx';

/** "in 5 h 3 min" or "12.0 s ago" from now to an ISO time. */
function fromNow(iso: string): string {
  const ms = new Date(iso).getTime() - Date.now();
  return ms >= 0 ? `in ${formatDuration(ms)}` : `${formatDuration(-ms)} ago`;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' || typeof value === 'number' ? String(value) : undefined);

/** One line of what the trigger listens to: a schedule's cron and timezone, a webhook's signature, a subscription's stream. */
function specLine(t: Trigger): string {
  const s = t.spec;
  if (t.kind === 'schedule') return `${text(s.cron) ?? ''} ${text(s.timezone) ?? 'UTC'} · overlap ${text(s.overlap) ?? 'skip'} · catch-up ${text(s.catch_up) ?? 'latest'}`;
  if (t.kind === 'webhook') return `POST /api/hooks/${t.path}/${t.name} · ${typeof s.signature === 'string' ? s.signature : 'hmac'} signature`;
  return `${text(s.stream) ?? ''} ${text(s.subject) ?? ''}`;
}

/** When it fires next: a schedule's next times (relative, and absolute below), else what makes it fire. */
function NextFires({ t }: { t: Trigger }) {
  if (t.state === 'paused') return <span className="muted">paused</span>;
  if (t.kind !== 'schedule') return <span className="muted">{t.kind === 'webhook' ? 'on each delivery' : 'on each message'}</span>;
  if (t.next_fires.length === 0) return <span className="muted">never again</span>;
  return (
    <ol className="fires">
      {t.next_fires.map((iso) => (
        <li key={iso}>
          <time dateTime={iso} title={iso}>
            {fromNow(iso)}
          </time>{' '}
          <span className="muted">{formatTime(iso)}</span>
        </li>
      ))}
    </ol>
  );
}

function LastFire({ t }: { t: Trigger }) {
  const f = t.last_fire;
  if (!f) return <span className="muted">never fired</span>;
  return (
    <>
      {f.execution_id !== null ? <a href={href(['executions', f.execution_id])}>#{f.execution_id}</a> : null} <StatusBadge status={f.outcome} />{' '}
      <time dateTime={f.at} title={`${formatTime(f.at)} · fire key ${f.fire_key}`}>
        {fromNow(f.at)}
      </time>
      {t.last_error ? <div className="muted trigger-error">{t.last_error}</div> : null}
    </>
  );
}

/** Why an active NATS trigger takes no messages (its stream, server or credential): "active" alone would say it consumes. */
function NotConsuming({ t }: { t: Trigger }) {
  const p = t.subscription_problem;
  if (!p) return null;
  return (
    <div className="trigger-error">
      not consuming since{' '}
      <time dateTime={p.since} title={formatTime(p.since)}>
        {fromNow(p.since)}
      </time>
      : {p.message}
    </div>
  );
}

/**
 * Triggers as a table: playbook, name, kind, state, next fires, last result (linking its
 * execution), counts; Pause/Resume and Fire for operators. `changed` is called after an action.
 */
export function TriggerTable({ triggers, changed, showPath = true }: { triggers: Trigger[]; changed: () => void; showPath?: boolean }) {
  const canOperate = useCan('operator');
  const [busy, setBusy] = useState<string | null>(null);
  const holdFocus = useFocusBack(busy !== null);
  const [notice, setNotice] = useState<{ text: string; executionId: number | null } | null>(null);
  const [error, setError] = useState<unknown>();
  const act = async (t: Trigger, action: 'pause' | 'resume' | 'fire') => {
    holdFocus();
    setBusy(`${t.path}\n${t.name}`);
    setError(undefined);
    setNotice(null);
    try {
      if (action === 'fire') {
        const out = await api<TriggerFired>(triggerUrl(t, 'fire'), { body: {} });
        setNotice({ text: `${t.name} of ${t.path} fired: ${out.outcome}${out.execution_id === null ? '' : ', execution '}`, executionId: out.execution_id });
      } else {
        const out = await api<Trigger>(triggerUrl(t, action), { body: {} });
        setNotice({ text: `${out.name} of ${out.path} is ${out.state}`, executionId: null });
      }
      changed();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  };
  return (
    <>
      <ErrorBox error={error} />
      {notice ? (
        <p role="status">
          {notice.text}
          {notice.executionId !== null ? <a href={href(['executions', notice.executionId])}>{notice.executionId}</a> : null}
        </p>
      ) : null}
      <table className="list triggers">
        <thead>
          <tr>
            {showPath ? <th scope="col">Playbook</th> : null}
            <th scope="col">Trigger</th>
            <th scope="col">Kind</th>
            <th scope="col">State</th>
            <th scope="col">Next fires</th>
            <th scope="col">Last result</th>
            <th scope="col" title="fires started / skipped (overlap, catch-up) / refused (errors)">
              Fires / skipped / errors
            </th>
            {canOperate ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {triggers.map((t) => {
            const key = `${t.path}\n${t.name}`;
            return (
              <tr key={key} aria-label={`${t.name} of ${t.path}`}>
                {showPath ? (
                  <td>
                    <a href={href(['catalog', 'entry', t.path])}>{t.path}</a>
                  </td>
                ) : null}
                <td>
                  <strong>{t.name}</strong>
                  {t.description ? <div className="muted">{t.description}</div> : null}
                </td>
                <td>
                  {t.kind}
                  <div className="muted spec">{specLine(t)}</div>
                </td>
                <td>
                  <StatusBadge status={t.state} />
                  <NotConsuming t={t} />
                </td>
                <td>
                  <NextFires t={t} />
                </td>
                <td>
                  <LastFire t={t} />
                </td>
                <td>
                  {t.fires} / {t.skipped} / {t.errors}
                </td>
                {canOperate ? (
                  <td>
                    <div className="actions">
                      <button type="button" disabled={busy === key} aria-label={`${t.state === 'paused' ? 'Resume' : 'Pause'} ${t.name} of ${t.path}`} onClick={() => void act(t, t.state === 'paused' ? 'resume' : 'pause')}>
                        {t.state === 'paused' ? 'Resume' : 'Pause'}
                      </button>
                      <button
                        type="button"
                        disabled={busy === key}
                        aria-label={`Fire ${t.name} of ${t.path} now`}
                        onClick={() => {
                          if (confirm(`Start ${t.path} now through trigger ${t.name}?`)) void act(t, 'fire');
                        }}
                      >
                        Fire now
                      </button>
                    </div>
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}
