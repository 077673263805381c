import { retryDefaultStep, retryReaches } from '../../machines/retry-default-step.ts';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import { ExecutionFollower, loadAppliedEvents } from '../../actors/execution-state.ts';
import { startExecutions, type StartKey } from '../../actors/start-execution.ts';
import { EVENT } from '../../machines/event-types.ts';
import type { ExecutionContext, ExecutionInput, StepOutcome } from '../../machines/execution/types.ts';
import type { Identity } from '../auth/identity.ts';
import { getCatalogById, getCatalogEntry } from '../db/catalog.repo.ts';
import { getExecution } from '../db/execution.repo.ts';
import { ServiceError, notFound } from '../errors.ts';
import { askedOf } from './asked-of.ts';
import { unbegunRetry } from './unbegun-retry.ts';

const UNFINISHED = new Set(['running', 'queued', 'paused']);

/**
 * Bytes (as JSON) the replayed runs after each step's first may come to together: the outcomes a
 * retry replays are its input, in its snapshot, written and read whole with each of its events (as
 * kept signals are: MAX_KEPT_SIGNAL_BYTES). A step's runs past them run again, as they did before
 * more than its first run was replayed.
 */
export const MAX_REPLAYED_RUN_BYTES = 1024 * 1024;

export type Retried = { execution_id: number; retry_of: number; from_step: string; replayed: string[] };

/**
 * Starts a new execution of a finished one's catalog version with its start payload, from
 * `fromStep` (default: the step whose failure ended it; for a cancelled one, the step the cancel
 * cut short, or its entry when none had begun): every run of a step that completed ok (or whose
 * wait timed out) before `fromStep` first ended is taken again, in order, with its recorded outcome
 * (`step.replayed`) instead of running. 422 for a step the old one never reached (other than its entry).
 * `execution.started.context.retry_of` links the new one to the old. 409 while the old one runs.
 * Signals the old one kept for a step that had not taken them (`buffer: true`) are kept by the new
 * one (keptSignals): they were accepted, 202, and would be lost.
 */
export async function retryExecution(deps: EngineDeps, id: number, fromStep: string | undefined, requestedBy?: Identity, key?: Omit<StartKey, 'answer'>): Promise<Retried> {
  const row = await getExecution(deps.db, id);
  if (!row) throw notFound(`execution ${id}`);
  if (UNFINISHED.has(row.status)) throw new ServiceError('conflict', `execution ${id} is ${row.status}: retry it once it has finished`);
  // Its log folded event by event (as readExecutionState folds it): each step's runs are read off the way.
  const follower = new ExecutionFollower(await deps.cache.get(deps.db, row.catalog_id));
  const events = await loadAppliedEvents(deps.db, row, 0);
  const folded: Folded[] = follower.fold(events).map((step) => ({ ended: step.ended, steps: step.snapshot.context.steps, finished: step.snapshot.context.finished !== null }));
  const snapshot = follower.snapshot;
  if (!snapshot) throw notFound(`execution ${id}`);
  const ctx = snapshot.context;
  const viewed = follower.view()?.steps ?? {};
  const pb = follower.compiled.playbook;
  const steps = pb.workflow.map((s) => s.step);
  const startedEvent = events.find((e) => e.event_type === EVENT.executionStarted);
  // A retry that began no step (cancelled while queued) is retried as it was asked for, by default.
  const unbegun = unbegunRetry(startedEvent, ctx, steps);
  const from = fromStep ?? unbegun?.from ?? retryDefaultStep({ status: row.status, errorStep: ctx.finished?.error?.step, steps, cutShort: (step) => viewed[step]?.status === 'cancelled' });
  if (!from) {
    throw new ServiceError('unprocessable', { message: `execution ${id} did not fail at a step: say which step to retry from`, errors: ['from_step: required: the execution has no failed step'] });
  }
  if (!steps.includes(from)) throw await noSuchStep(deps, row, from, steps);
  // A step the execution never reached: every step that ended would be replayed, taking the same
  // arcs, and the retry would run nothing from it (a step another arc leads to, say).
  if (from !== unbegun?.from && !retryReaches(from, { entry: pb.entry, errorStep: ctx.finished?.error?.step, exited: (step) => ctx.completedSteps.includes(step), cutShort: (step) => viewed[step]?.status === 'cancelled' })) {
    const ran = ctx.completedSteps.join(', ') || 'none';
    throw new ServiceError('unprocessable', { message: `execution ${id} never ran step ${from}: retry it from a step it ran`, errors: [`from_step: step ${from} did not run in execution ${id} (steps that ran: ${ran})`] });
  }
  // Each step's runs that ended before `from` first did are taken as they were, in order, if they
  // ended ok or timed out waiting (an arc took the timeout: the wait is not waited again): all of
  // them, so a cycle of steps (poll, check, poll again) runs none of them again. Not the run whose
  // failure ended the execution (runsBefore leaves it out), nor a run that ended in error (it, and
  // its step's later runs, run again).
  // From where an unbegun retry was to start: the outcomes it was started with (none ran since).
  const runs = runsBefore(folded, from, ctx.finished?.error?.step);
  const toStartWith = from === unbegun?.from ? unbegun.replay : {};
  const replay: Record<string, StepOutcome[]> = { ...toStartWith, ...replayOfRuns(runs) };
  // Named in the order their runs ended (the Map's): an object's keys put a step named `2` first,
  // and the outcomes an unbegun retry was started with come back in jsonb's key order (by length),
  // so those are named in the playbook's.
  const replayed = [...steps.filter((s) => Object.hasOwn(toStartWith, s) && !runs.has(s)), ...[...runs.keys()].filter((s) => Object.hasOwn(replay, s))];
  // Started as the old one was asked for: its labels (label filters find both) and its priority,
  // read off the log loaded above.
  const answer = (executionId: number): Retried => ({ execution_id: executionId, retry_of: id, from_step: from, replayed });
  const asked = askedOf(startedEvent, events.find((e) => e.event_type === EVENT.executionAdmitted));
  const [started] = await startExecutions(deps, [
    {
      compiled: follower.compiled,
      payload: ctx.input.args,
      requestedBy,
      origin: { retry_of: id, from_step: from, ...(asked.labels ? { labels: asked.labels } : {}) },
      replay,
      ...keptSignals(ctx),
      ...(asked.priority === undefined ? {} : { priority: asked.priority }),
      ownHandles: true,
      successor: true,
      // An Idempotency-Key is stored with the retry's execution, by the statement that writes it
      // (as a start's): a repeat is answered with this answer and starts nothing.
      ...(key ? { idempotency: { ...key, answer: (s) => answer(s.executionId) } } : {}),
    },
  ]);
  if (started instanceof ServiceError) throw started;
  return answer(started.executionId);
}

/**
 * 422 for a `from_step` the playbook has not. A retry runs the version the execution ran, not the
 * newest: one added by a version registered since was refused as if the playbook had no such step
 * (`svc catalog` showing it), so a version other than the newest is named, and whether the newest has it.
 */
async function noSuchStep(deps: EngineDeps, row: { execution_id: number; path: string; catalog_id: number }, from: string, steps: readonly string[]): Promise<ServiceError> {
  const [ran, newest] = await Promise.all([getCatalogById(deps.db, row.catalog_id), getCatalogEntry(deps.db, row.path)]);
  const older = ran && newest && newest.version !== ran.version ? ran.version : undefined;
  if (older === undefined || !newest) return new ServiceError('unprocessable', { message: `playbook ${row.path} has no step ${from}`, errors: [`from_step: not a step of ${row.path} (its steps: ${steps.join(', ')})`] });
  const inNewest = (await deps.cache.get(deps.db, newest.catalog_id)).playbook.workflow.some((s) => s.step === from);
  const newestSays = inNewest ? `; version ${newest.version}, the newest, has it: start that one to run it` : '';
  return new ServiceError('unprocessable', {
    message: `playbook ${row.path} has no step ${from} in version ${older}, the version execution ${row.execution_id} ran, which a retry runs again${newestSays}`,
    errors: [`from_step: not a step of ${row.path} version ${older} (its steps: ${steps.join(', ')})`],
  });
}

/**
 * The outcomes a successor replays of each step's `runs` (in the order they ended): the runs that
 * ended ok or whose wait timed out, up to the step's first other end (that run, and its later
 * ones, run again); a step's first run whatever its size, its later ones while
 * MAX_REPLAYED_RUN_BYTES lasts.
 */
function replayOfRuns(runs: ReadonlyMap<string, StepOutcome[]>): Record<string, StepOutcome[]> {
  const replay: Record<string, StepOutcome[]> = {};
  let budget = MAX_REPLAYED_RUN_BYTES;
  for (const [name, outcomes] of runs) {
    const failedAt = outcomes.findIndex((o) => o.status !== 'ok' && o.status !== 'timeout');
    const taken = failedAt < 0 ? outcomes : outcomes.slice(0, failedAt);
    if (!taken.length) continue;
    let kept = 1;
    for (; kept < taken.length; kept++) {
      const bytes = Buffer.byteLength(JSON.stringify(taken[kept]));
      if (bytes > budget) break;
      budget -= bytes;
    }
    replay[name] = taken.slice(0, kept);
  }
  return replay;
}

/**
 * The signals `ctx` keeps for steps that have not taken them (`buffer: true`), as a successor's
 * start takes them (ExecutionInput.signals); nothing when it keeps none.
 */
function keptSignals(ctx: ExecutionContext): { signals?: NonNullable<ExecutionInput['signals']> } {
  const kept = Object.entries(ctx.signals).filter(([, list]) => list.length > 0);
  return kept.length ? { signals: Object.fromEntries(kept) } : {};
}

/**
 * What a successor of a running execution (auto-resume's restart) carries over: it replays every
 * run of a step that ended ok (or whose wait timed out) in its log so far, as a retry from the step
 * the stop cut short would, so the steps it completed do not run again, and the outcomes it was
 * started with (a retry's) of steps it had not reached; it keeps the signals the root kept
 * (keptSignals). Read from the whole log, folded once.
 */
export async function carriedToSuccessor(deps: EngineDeps, id: number): Promise<Pick<ExecutionInput, 'replay' | 'signals'>> {
  const row = await getExecution(deps.db, id);
  if (!row) return {};
  const follower = new ExecutionFollower(await deps.cache.get(deps.db, row.catalog_id));
  const folded: Folded[] = follower.fold(await loadAppliedEvents(deps.db, row, 0)).map((step) => ({ ended: step.ended, steps: step.snapshot.context.steps, finished: step.snapshot.context.finished !== null }));
  const ctx = follower.snapshot?.context;
  const replay = { ...ctx?.input.replay, ...replayOfRuns(runsBefore(folded, undefined, undefined)) };
  return { ...(Object.keys(replay).length ? { replay } : {}), ...(ctx ? keptSignals(ctx) : {}) };
}

/** What one event of the old execution's fold ended: its steps' runs (in order), their outcomes after it, and whether the execution had ended. */
type Folded = { ended: readonly string[]; steps: ExecutionContext['steps']; finished: boolean };

/**
 * The outcomes of each step's runs, in the order they ended, that ended before step `from` first
 * did (every run that ended, when it never did or `from` is undefined). A run's outcome is its step's in `steps` after
 * the event that ended it (of two runs of one step ended by one event, both get the later's).
 * Not the run of `errorStep` that ended the execution (in the event that ended it): its outcome
 * (a wait's timeout no arc took, an arc that failed) would end the retry the same way at once.
 * Its step's earlier runs are runs like any other: a step that ran ok before `from` and failed
 * after it is replayed for that first run.
 */
function runsBefore(folded: readonly Folded[], from: string | undefined, errorStep: string | undefined): Map<string, StepOutcome[]> {
  const runs = new Map<string, StepOutcome[]>();
  for (const f of folded) {
    for (const name of f.ended) {
      if (name === from) return runs;
      if (f.finished && name === errorStep) continue;
      // Own keys only: a step may be named like a property every object inherits (`constructor`).
      if (!Object.hasOwn(f.steps, name)) continue;
      const list = runs.get(name);
      if (list) list.push(f.steps[name]);
      else runs.set(name, [f.steps[name]]);
    }
  }
  return runs;
}

