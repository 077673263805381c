import { useEffect, useId, useRef, useState } from 'react';
import { isObject } from '../../../src/objects.ts';
import { api, type ExecutionDetail, type ExecutionWait, type SignalSent } from '../api.ts';
import { NOT_DEFINED_TEXT, keyText } from '../flow-text.ts';
import { byStepOrder } from '../graph/model.ts';
import { useFocusBack } from '../hooks.ts';
import { newIdempotencyKey } from '../idempotency-key.ts';
import { href } from '../route.ts';
import { useMayApprove } from '../session.ts';
import { ErrorBox, Section, formatClock, formatTime } from '../ui.tsx';

/**
 * What the execution's waiting steps wait for (GET /api/executions/{id}'s `waits`): a timer's wake
 * time, or a signal with its approval roles and timeout, and a form to send it; and its commands
 * waiting for room on their task's limit (`limit_waits`).
 */
export function ExecutionWaits({ execution, order, onSent }: { execution: ExecutionDetail; order?: readonly string[]; onSent: () => void }) {
  // The last answer stays when its wait is gone (the step went on).
  const [sent, setSent] = useState<SignalSent>();
  // A signal delivered ends its wait, and its form (and the Send button that had focus) goes: focus
  // goes to what it says instead, which stays.
  const sentText = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (sent) sentText.current?.focus();
  }, [sent]);
  // In playbook order (`order`, the state's step_order), as the statechart reads.
  const waits = byStepOrder(execution.waits ?? [], (w) => w.step, order ?? []);
  const limitWaits = execution.limit_waits ?? [];
  if (waits.length === 0 && limitWaits.length === 0 && !sent) return null;
  return (
    <Section title="Waiting">
      {sent ? (
        <p role="status" tabIndex={-1} ref={sentText}>
          Signal {sent.signal} {sent.status}
          {sent.step ? ` to step ${sent.step}` : ''} (event #{sent.event_id}).
        </p>
      ) : null}
      {waits.length === 0 && limitWaits.length === 0 ? <p className="muted">No step is waiting now.</p> : null}
      <ul className="waits">
        {limitWaits.map((w) => (
          <li key={`limit/${w.step}/${w.seq}`} className="wait wait-limit" aria-label={`limit wait of ${w.step}`}>
            <dl className="facts">
              <dt>Step</dt>
              <dd>
                <span className="ev-step">{w.step}</span> <span className="badge s-waiting">waiting</span>
              </dd>
              <dt>For</dt>
              <dd className="limit-wait">
                {/* A limit nobody defined frees no room: its commands wait until one is defined. */}
                {w.defined === false ? 'limit' : 'room on limit'} <a href={href(['operations'], { limit: w.limit })}>{w.limit}</a>, key <code>{keyText(w.key)}</code> since {formatClock(w.since)}
                {w.defined === false ? <> <span className="badge s-undefined">{NOT_DEFINED_TEXT}</span></> : null}
              </dd>
            </dl>
          </li>
        ))}
        {waits.map((w) => (
          <li key={`${w.step}/${w.seq}`} className={`wait wait-${w.kind}`} aria-label={`wait of ${w.step}`}>
            <dl className="facts">
              <dt>Step</dt>
              <dd>
                <span className="ev-step">{w.step}</span> <span className="badge s-waiting">waiting</span>
              </dd>
              <dt>For</dt>
              <dd>{w.kind === 'signal' ? <>signal <code>{w.signal}</code></> : timerText(w)}</dd>
              {w.kind === 'signal' ? (
                <>
                  <dt>Approval</dt>
                  <dd>{w.approval_roles === null ? 'any operator' : `role ${w.approval_roles.join(' or ')}`}</dd>
                </>
              ) : null}
              <dt>{w.kind === 'timer' && w.for !== 'timeout' ? 'Wakes' : 'Times out'}</dt>
              <dd>{w.wake_at ? <WakeTime at={w.wake_at} paused={execution.status === 'paused'} /> : 'never'}</dd>
              {/* A signal wait without timeout said nothing of its age (absent from older servers). */}
              {w.since ? (
                <>
                  <dt>Since</dt>
                  <dd className="wait-since">{formatClock(w.since)}</dd>
                </>
              ) : null}
            </dl>
            {w.kind === 'signal' && w.signal ? <SignalForm
                executionId={execution.execution_id}
                wait={w}
                signal={w.signal}
                onSent={(out) => {
                  setSent(out);
                  onSent();
                }}
              /> : null}
          </li>
        ))}
      </ul>
      <MoreWaits total={execution.limit_waits_count} listed={limitWaits.length} what="commands wait for room on a limit" />
      <MoreWaits total={execution.waits_count} listed={waits.length} what="waits" />
    </Section>
  );
}

/** The server lists the first of many (a parallel loop on a limit queues a command an item): how many in all. */
function MoreWaits({ total, listed, what }: { total: number | undefined; listed: number; what: string }) {
  return total !== undefined && total > listed ? <p className="muted">{total} {what} in all; the first {listed} are listed.</p> : null;
}

/** What a timer is for: a step's own (`a timer`), or a `playbook` task's: its child's timeout, the delay before its next attempt. */
function timerText(w: ExecutionWait): string {
  if (w.for === 'timeout') return `the timeout of task ${w.task}, attempt ${w.attempt}`;
  if (w.for === 'retry') return `the delay before attempt ${w.attempt} of task ${w.task}`;
  return 'a timer';
}

/** An absolute time and a countdown to it, updated every second. */
function WakeTime({ at, paused }: { at: string; paused: boolean }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = new Date(at).getTime() - now;
  return (
    <>
      <time dateTime={at}>{formatTime(at)}</time>{' '}
      <span className="countdown" aria-live="off">
        ({left > 0 ? `in ${countdown(left)}` : paused ? 'due; waits for resume' : 'due now'})
      </span>
    </>
  );
}

/** "2 h 05 min 09 s", "4 min 09 s", "9 s": whole seconds, rounded up (0 only when due). */
function countdown(ms: number): string {
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (h > 0) return `${h} h ${pad(m)} min ${pad(s)} s`;
  if (m > 0) return `${m} min ${pad(s)} s`;
  return `${s} s`;
}

/** POST /api/executions/{id}/signals/{name} with a JSON object payload, for a user whose role may answer. */
function SignalForm({ executionId, wait, signal, onSent }: { executionId: number; wait: ExecutionWait; signal: string; onSent: (answer: SignalSent) => void }) {
  const may = useMayApprove(wait.approval_roles);
  const [text, setText] = useState('{}');
  const [key, setKey] = useState(newIdempotencyKey);
  const [busy, setBusy] = useState(false);
  const holdFocus = useFocusBack(busy);
  const [error, setError] = useState<unknown>();
  let problem: string | null = null;
  let payload: unknown;
  try {
    payload = JSON.parse(text || '{}');
    if (!isObject(payload)) problem = 'the payload must be a JSON object';
  } catch (e) {
    problem = e instanceof Error ? e.message : String(e);
  }
  const send = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!may.ok || problem !== null || !isObject(payload)) return;
    holdFocus();
    setBusy(true);
    setError(undefined);
    try {
      const out = await api<SignalSent>(`/executions/${executionId}/signals/${encodeURIComponent(signal)}`, { body: { payload }, headers: { 'idempotency-key': key } });
      setKey(newIdempotencyKey());
      onSent(out);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  // Not made of the step's name: a name with a space made aria-describedby two ids naming nothing.
  const id = useId();
  return (
    <form className="signal run" onSubmit={send} aria-label={`Send signal ${signal}`}>
      <fieldset disabled={!may.ok} aria-describedby={may.ok ? undefined : `${id}-why`}>
        <label>
          Payload (JSON object)
          <textarea
            className="code"
            rows={3}
            value={text}
            spellCheck={false}
            aria-invalid={problem ? true : undefined}
            onChange={(e) => {
              setText(e.target.value);
              setKey(newIdempotencyKey());
            }}
          />
        </label>
        {problem ? <p className="error">Not sent: {problem}</p> : null}
        <button type="submit" disabled={busy || problem !== null}>
          Send {signal}
        </button>
      </fieldset>
      {may.ok ? null : (
        <p id={`${id}-why`} className="muted">
          {may.reason}
        </p>
      )}
      <ErrorBox error={error} />
    </form>
  );
}
