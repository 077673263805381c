import type { WaitSpec } from '../../src/dsl/parse-playbook.ts';
import { renderValue } from '../../src/dsl/render.ts';
import { admitsSignal } from '../../src/auth/roles.ts';
import { CODE } from '../error-codes.ts';
import { errorOf } from './arcs.ts';
import { baseRenderContext, type Draft } from './step-work.ts';
import type { SignalSent, StepOutcome, StepRun } from './types.ts';
import { iterationKey, keyOf } from './keys.ts';
import { isCalendarDate, isoTimeInRange } from '../../src/calendar-time.ts';

// The body of a step that waits (DESIGN.md "Waiting and control"), pure: its run waits under a
// seq like a command, and the `wait` effect has the row that holds its wake-up time (or the
// awaited signal) written beside the event that set it; no worker and no connection is held.
// timer.fired, wait.timed_out and signal.received end it (endWait).

const ITERATION = iterationKey(null);
// An ISO 8601 date-time with its offset (T or a space; minutes, seconds and a fraction as
// clients write them). Only this shape is handed to Date.parse: it reads many others too, and
// some wrongly for their writer (`01.02.2026 10:00 +01:00`, 1 February, as 2 January; `12 Z` as
// 2001-12-01), so a wait would wake at a time nobody asked for instead of failing (wait_until).
const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/** Starts the wait of a step's run, or ends the run at once: a signal kept from before, or an `until` that does not render to a time. */
export function startWait(d: Draft, run: StepRun, wait: WaitSpec): void {
  if (wait.kind === 'signal') {
    // Own keys only: a signal may be named like a property every object inherits (`constructor`).
    const kept = Object.hasOwn(d.c.signals, wait.signal) ? d.c.signals[wait.signal] : [];
    const taken = kept.findIndex((signal) => takesKept(wait, signal));
    if (taken >= 0) {
      // Sent before this step waited, and kept for a step like it: taken now, oldest first.
      const { [wait.signal]: _, ...others } = d.c.signals;
      const left = kept.filter((_signal, i) => i !== taken);
      d.c.signals = left.length > 0 ? { ...others, [wait.signal]: left } : others;
      run.outcome = signalled(kept[taken]);
      return;
    }
    const seq = waitUnder(d, run, wait.signal);
    d.emit({ type: 'wait', seq, step: run.step, kind: 'signal', signal: wait.signal, wakeAt: null, afterMs: wait.timeoutMs, roles: wait.roles });
    return;
  }
  let wakeAt: string | null = null;
  if (wait.until !== undefined) {
    try {
      wakeAt = timeOf(renderValue(wait.until, baseRenderContext(d.c), `${run.step}.wait.until`));
    } catch (err) {
      run.outcome = { status: 'error', result: null, error: errorOf(err), tasks: {} };
      return;
    }
    if (wakeAt === null) {
      run.outcome = { status: 'error', result: null, error: { message: `${run.step}.wait.until must render to a time (ISO 8601 with an offset, or epoch milliseconds)`, code: CODE.wait_until }, tasks: {} };
      return;
    }
  }
  const seq = waitUnder(d, run, undefined);
  d.emit({ type: 'wait', seq, step: run.step, kind: 'timer', signal: null, wakeAt, afterMs: wait.forMs ?? null, roles: null });
}

/** Ends the wait under `seq` (a timer fired, a signal timed out or came): the run's outcome, and its row goes. */
export function endWait(d: Draft, seq: number, how: 'fired' | 'timeout' | SignalSent): void {
  const p = d.c.pending[keyOf(seq)];
  if (p?.kind !== 'wait' || (typeof how === 'object' && p.signal !== how.name)) return;
  delete d.pending()[keyOf(seq)];
  const run = d.run(p.run);
  delete run.iterations[p.iteration];
  const wait = d.step(run.step).wait;
  if (how === 'fired') run.outcome = { status: 'ok', result: null, error: null, tasks: {} };
  else if (how === 'timeout') {
    const name = wait?.kind === 'signal' ? wait.signal : '?';
    run.outcome = { status: 'timeout', result: null, error: { message: `no signal '${name}' came within the step's timeout`, code: CODE.wait_timeout }, tasks: {} };
  } else run.outcome = signalled(how);
  d.emit({ type: 'endWaits', seqs: [seq] });
}

function waitUnder(d: Draft, run: StepRun, signal: string | undefined): number {
  const seq = d.c.nextSeq++;
  run.iterations[ITERATION] = { index: null, segment: 0, tasks: {}, seq };
  d.pending()[keyOf(seq)] = { run: run.id, iteration: ITERATION, kind: 'wait', ...(signal === undefined ? {} : { signal }) };
  return seq;
}

/**
 * Whether a step that begins to wait takes a kept signal: only a step that keeps them (`buffer:
 * true`) and whose approval roles admit its sender, as a signal sent while it waited would be.
 * A signal recorded without its sender's role (an older log) is taken as it was then, by any.
 */
function takesKept(wait: Extract<WaitSpec, { kind: 'signal' }>, signal: SignalSent): boolean {
  return signal.role === undefined || (wait.buffer && admitsSignal(wait.roles, signal.role));
}

const signalled = (signal: SignalSent): StepOutcome => ({ status: 'ok', result: signal.payload, error: null, tasks: {}, signal });

/**
 * An ISO 8601 time with its offset (on a real day), or epoch milliseconds, as ISO text, in the
 * years 0001 to 9999 (what the wait's row stores); null for anything else.
 */
function timeOf(value: unknown): string | null {
  if (typeof value === 'number') return isoTimeInRange(value);
  // A time without an offset would be read in the server's own zone: refused, not guessed; and
  // the day must be a real one (JavaScript rolls 02-30 over).
  const text = typeof value === 'string' ? value.trim() : '';
  if (!ISO_TIME.test(text) || !isCalendarDate(text)) return null;
  return isoTimeInRange(Date.parse(text));
}
