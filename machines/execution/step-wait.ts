import type { WaitSpec } from '../../src/dsl/parse-playbook.ts';
import { renderValue } from '../../src/dsl/render.ts';
import { admitsSignal } from '../../src/auth/roles.ts';
import { CODE } from '../error-codes.ts';
import { errorOf } from './arcs.ts';
import { baseRenderContext, type Draft } from './step-work.ts';
import type { SignalSent, StepOutcome, StepRun } from './types.ts';
import { iterationKey, keyOf } from './keys.ts';
import { waitTimeOf } from '../../src/dsl/wait-time.ts';

// The body of a step that waits (DESIGN.md "Waiting and control"), pure: its run waits under a
// seq like a command, and the `wait` effect has the row that holds its wake-up time (or the
// awaited signal) written beside the event that set it; no worker and no connection is held.
// timer.fired, wait.timed_out and signal.received end it (endWait).

const ITERATION = iterationKey(null);

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
      run.atOnce = 'kept_signal';
      return;
    }
    const seq = waitUnder(d, run, wait.signal);
    d.emit({ type: 'wait', seq, step: run.step, kind: 'signal', signal: wait.signal, wakeAt: null, afterMs: wait.timeoutMs, roles: wait.roles });
    return;
  }
  let wakeAt: string | null = null;
  if (wait.until !== undefined) {
    try {
      wakeAt = waitTimeOf(renderValue(wait.until, baseRenderContext(d.c), `${run.step}.wait.until`));
    } catch (err) {
      run.outcome = { status: 'error', result: null, error: errorOf(err), tasks: {} };
      run.atOnce = 'until_failed';
      return;
    }
    if (wakeAt === null) {
      run.outcome = { status: 'error', result: null, error: { message: `${run.step}.wait.until must render to a time (ISO 8601 with an offset, or epoch milliseconds)`, code: CODE.wait_until }, tasks: {} };
      run.atOnce = 'until_failed';
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
