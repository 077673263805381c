import { setTimeout as sleep } from 'node:timers/promises';
import type { ProgressView } from './progress-view.ts';
import { ServerUnreachableError, type ExecutionStatus, type RunApi } from './run-api.ts';
import { StepProgress } from './step-progress.ts';
import { EVENT } from '../../machines/event-types.ts';
import { isTerminalExecutionStatus } from '../../machines/statuses.ts';
import { isObject } from '../objects.ts';
import { waitNote } from './wait-notes.ts';

export type WatchOutcome = { kind: 'terminal'; execution: ExecutionStatus; progress: StepProgress } | { kind: 'interrupted'; progress: StepProgress };

export type WatchOptions = {
  view: ProgressView;
  /** performance.now() when the run began; elapsed times count from it. */
  t0: number;
  /** Aborting stops the watch (Ctrl-C); the execution itself is left alone. */
  signal: AbortSignal;
};

const POLL_MIN_MS = 100;
const POLL_MAX_MS = 1000;
/** How often a terminal's live line reads a running loop's items (GET /state). */
const LOOPS_EVERY_MS = 1000;
/** How long the server may stay unreachable while we wait before giving up (a restart fits in it). */
export const UNREACHABLE_GRACE_MS = 30_000;

/**
 * Polls the execution's status and its events (incrementally, from the last event seen) until it
 * is terminal or `signal` aborts, reporting step changes to the view. Reading the status before
 * the events means that once the status is terminal every event up to the end has been seen.
 */
export async function watchExecution(api: RunApi, id: number, path: string, opts: WatchOptions): Promise<WatchOutcome> {
  const { view, t0, signal } = opts;
  const elapsed = () => performance.now() - t0;
  let progress = new StepProgress(undefined);
  try {
    progress = new StepProgress(await api.stepCount(path, signal));
    let since = 0;
    let delay = POLL_MIN_MS;
    let unreachableSince: number | undefined;
    let loopsReadAt = -Infinity;
    for (;;) {
      try {
        const execution = await api.execution(id, signal);
        const events = await api.eventsAfter(id, since, signal);
        if (unreachableSince !== undefined) view.note('server reachable again', elapsed());
        unreachableSince = undefined;
        let changed = false;
        for (const e of events) {
          since = Math.max(since, e.event_id);
          const admission = admissionNote(e);
          if (admission) view.note(admission, elapsed());
          const change = progress.apply(e);
          if (change) {
            view.change(change, progress, elapsed());
            changed = true;
          }
          // After its step's line: `step approve started`, then what it waits for.
          const waiting = waitNote(id, e);
          if (waiting) view.note(waiting, elapsed());
        }
        // Paused (or queued) is not the end: it goes on once resumed (or admitted).
        if (isTerminalExecutionStatus(execution.status)) return { kind: 'terminal', execution, progress };
        // A loop of a thousand items ran for minutes as `now: many` alone: its items done say how far.
        if (view.showsLoops && progress.runningSteps.length && performance.now() - loopsReadAt >= LOOPS_EVERY_MS) {
          loopsReadAt = performance.now();
          progress.setLoops(await api.steps(id, signal).catch((err: unknown) => {
            if (err instanceof ServerUnreachableError || signal.aborted) throw err;
            return {}; // a refusal or an answer it does not know: the steps without their items
          }));
        }
        view.tick(progress, elapsed());
        delay = changed ? POLL_MIN_MS : Math.min(POLL_MAX_MS, Math.round(delay * 1.5));
      } catch (err) {
        if (!(err instanceof ServerUnreachableError) || signal.aborted) throw err;
        if (unreachableSince === undefined) {
          unreachableSince = performance.now();
          view.note(`${err.message}; retrying for up to ${UNREACHABLE_GRACE_MS / 1000}s`, elapsed());
        } else if (performance.now() - unreachableSince > UNREACHABLE_GRACE_MS) throw err;
        delay = POLL_MAX_MS;
      }
      await sleep(delay, undefined, { signal });
    }
  } catch (err) {
    if (signal.aborted) return { kind: 'interrupted', progress };
    throw err;
  }
}

/**
 * What an admission event says while `svc run --wait` waits (flow control: no step runs while the
 * execution is queued): `queued on limit tenant key "acme"` (or until its debounce window closes),
 * then `admitted`; undefined for any other event.
 */
function admissionNote(e: { event_type: string; context?: unknown }): string | undefined {
  if (e.event_type === EVENT.executionAdmitted) return 'admitted: its steps run now';
  if (e.event_type !== EVENT.executionQueued) return undefined;
  const c = isObject(e.context) ? e.context : {};
  const on = typeof c.limit === 'string' ? ` on limit ${c.limit} key ${JSON.stringify(typeof c.key === 'string' ? c.key : '')}` : '';
  const window = typeof c.debounce_until === 'string' ? ` until its debounce window closes at ${c.debounce_until}` : '';
  return `queued${on}${window}: no step runs until it is admitted`;
}
