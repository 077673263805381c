import { useEffect, useRef, useState } from 'react';
import { EVENT } from '../../../machines/event-types.ts';
import { isTerminalExecutionStatus } from '../../../machines/statuses.ts';
import { askedOf } from '../../../src/engine/asked-of.ts';
import { api, type ExecutionDetail, type ExecutionEvent, type RetryStarted } from '../api.ts';
import { versionOf } from '../graph/load-graph.ts';
import { shownName } from '../graph/layout.ts';
import { href, navigate } from '../route.ts';
import { formatClock } from '../ui.tsx';

/** POST /api/executions/{id}/cancel's answer: `already_finished` (with its status) when it had ended. */
type Cancelled = { status: 'cancelled' | 'already_finished'; execution_id: number; execution_status?: string };

/**
 * What an operator does to an execution: pause or resume it, cancel it (a reason, cascading to
 * its child executions or not), retry it from a step once it has ended (then its new execution
 * is shown), or run the same version again from scratch. `done` says what happened, in the past
 * tense and when: the message stays while the execution moves on (a resumed one completes), and
 * 'is running again' beside a completed badge was false; `failed` an API refusal.
 */
export function ExecutionControls({ execution, steps, retryFrom, unbegunFrom, events, done, failed }: {
  execution: ExecutionDetail;
  /** The steps a retry may start from, in playbook order (retryChoices). */
  steps: string[];
  /** The step the server retries from when none is named (retryDefault): the retry's default. */
  retryFrom: string | undefined;
  /** Of a retry that began no step: the step it was to start from (unbegunRetryFrom). */
  unbegunFrom?: string | undefined;
  events: ExecutionEvent[];
  done: (message: string) => void;
  failed: (error: unknown) => void;
}) {
  const id = execution.execution_id;
  const [busy, setBusy] = useState(false);
  const [reason, setReason] = useState('');
  const [cascade, setCascade] = useState(true);
  const [fromStep, setFromStep] = useState<string | null>(null);
  const chosen = fromStep ?? retryFrom ?? steps[0] ?? '';
  const ended = isTerminalExecutionStatus(execution.status);
  // Keyboard focus through an action: the button acted with is disabled while the call runs, and
  // Pause, Resume and Cancel are then replaced (Resume, Pause, Retry), each of which left focus
  // on the page's body. Once the call is over it goes back to that button, or to the first one
  // here, until the execution's status has moved on (or the call failed).
  const group = useRef<HTMLDivElement>(null);
  const refocus = useRef<{ label: string; status: string; settled: boolean } | null>(null);
  useEffect(() => {
    const pending = refocus.current;
    if (!pending || busy) return;
    const at = document.activeElement;
    if (at && at !== document.body && !group.current?.contains(at)) {
      refocus.current = null; // the user went elsewhere meanwhile
      return;
    }
    if (!at || at === document.body) {
      const buttons = [...(group.current?.querySelectorAll('button') ?? [])].filter((b) => !b.disabled);
      (buttons.find((b) => b.textContent === pending.label) ?? buttons[0])?.focus();
    }
    if (pending.settled || execution.status !== pending.status) refocus.current = null;
  });

  const act = async (what: () => Promise<void>) => {
    const at = document.activeElement;
    refocus.current = at instanceof HTMLElement && group.current?.contains(at) ? { label: at.textContent ?? '', status: execution.status, settled: false } : null;
    setBusy(true);
    failed(undefined);
    try {
      await what();
    } catch (error) {
      // Refused: the status stays as it was, so focus goes back once, to the same button.
      if (refocus.current) refocus.current.settled = true;
      failed(error);
    } finally {
      setBusy(false);
    }
  };
  const pause = () =>
    act(async () => {
      await api(`/executions/${id}/pause`, { body: {} });
      done(`Execution ${id} was paused at ${formatClock(new Date().toISOString())}: ${execution.status === 'queued' ? 'it keeps its place in the queue and is not admitted while it is paused' : 'no new command is issued while it is paused'}.`);
    });
  const resume = () =>
    act(async () => {
      await api(`/executions/${id}/resume`, { body: {} });
      done(`Execution ${id} was resumed at ${formatClock(new Date().toISOString())}.`);
    });
  const cancel = () => {
    if (!confirm(`Cancel execution ${id}${cascade ? ' and its child executions' : ' (its child executions go on)'}?`)) return;
    void act(async () => {
      const out = await api<Cancelled>(`/executions/${id}/cancel`, { body: { reason: reason.trim() || 'cancelled from the console', cascade } });
      // It may have ended while the cancel was on its way: the server then cancelled nothing.
      done(out.status === 'cancelled' ? `Execution ${id} was cancelled at ${formatClock(new Date().toISOString())}.` : `Execution ${id} had already ${out.execution_status ?? 'ended'} when the cancel arrived: nothing was cancelled.`);
    });
  };
  const retry = () =>
    act(async () => {
      const out = await api<RetryStarted>(`/executions/${id}/retry`, { body: chosen ? { from_step: chosen } : {} });
      navigate(href(['executions', out.execution_id]));
    });
  // The version it ran (its catalog_id's), as Retry does: the path alone starts the newest, whose
  // steps and inputs may not be those its workload was merged for. With what its start asked for,
  // as a retry is: the payload it ran with, its labels (label filters find both) and its priority.
  const rerun = () =>
    act(async () => {
      const asked = askedOf(events.find((e) => e.event_type === EVENT.executionStarted), events.find((e) => e.event_type === EVENT.executionAdmitted));
      const version = await versionOf(execution.path, execution.catalog_id);
      // Never the newest in its place: a server without the versions listing cannot say which it was.
      if (!version) throw new Error(`Cannot tell which version of ${execution.path} execution ${id} ran: nothing started.`);
      const out = await api<{ execution_id: number }>('/run/playbook', { body: { path: execution.path, version, ...asked } });
      navigate(href(['executions', out.execution_id]));
    });

  return (
    <div className="actions controls" role="group" aria-label="Controls" ref={group}>
      {/* A queued one is paused in its place in the queue: not admitted until it is resumed. */}
      {execution.status === 'running' || execution.status === 'queued' ? (
        <button type="button" onClick={pause} disabled={busy}>
          Pause
        </button>
      ) : null}
      {execution.status === 'paused' ? (
        <button type="button" onClick={resume} disabled={busy}>
          Resume
        </button>
      ) : null}
      {!ended ? (
        <span className="control-group">
          <input aria-label="Cancel reason" placeholder="reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} size={18} />
          <label>
            <input type="checkbox" checked={cascade} onChange={(e) => setCascade(e.target.checked)} /> cascade to child executions
          </label>
          <button type="button" className="danger" onClick={cancel} disabled={busy}>
            Cancel
          </button>
        </span>
      ) : null}
      {ended && steps.length > 0 ? (
        <span className="control-group">
          <label>
            Retry from step
            <select value={chosen} onChange={(e) => setFromStep(e.target.value)}>
              {steps.map((s) => (
                // A long name is cut as the statechart's box cuts it (the select grew as wide as it, out of the page); its value is whole.
                <option key={s} value={s} title={s}>
                  {shownName(s)}
                  {s === retryFrom ? (s === unbegunFrom ? ' (as it was to retry)' : execution.status === 'failed' ? ' (failed)' : ' (cut short)') : ''}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={retry} disabled={busy}>
            Retry
          </button>
        </span>
      ) : null}
      <button type="button" onClick={rerun} disabled={busy}>
        Re-run
      </button>
    </div>
  );
}
