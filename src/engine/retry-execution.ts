import type { EngineDeps } from '../../actors/engine-deps.ts';
import { readExecutionState, type ExecutionFollower } from '../../actors/execution-state.ts';
import { startExecutions } from '../../actors/start-execution.ts';
import type { StepOutcome } from '../../machines/execution/types.ts';
import type { Identity } from '../auth/identity.ts';
import { ServiceError, notFound } from '../errors.ts';
import { startAsked } from './start-asked.ts';

const UNFINISHED = new Set(['running', 'queued', 'paused']);

export type Retried = { execution_id: number; retry_of: number; from_step: string; replayed: string[] };

/**
 * Starts a new execution of a finished one's catalog version with its start payload, from
 * `fromStep` (default: the step whose failure ended it; for a cancelled one, the step the cancel
 * cut short, or its entry when none had begun): every step that completed ok (or whose wait
 * timed out) before `fromStep` first ended takes its recorded outcome (`step.replayed`) instead of
 * running again. 422 for a step the old one never reached (other than its entry).
 * `execution.started.context.retry_of` links the new one to the old. 409 while the old one runs.
 */
export async function retryExecution(deps: EngineDeps, id: number, fromStep: string | undefined, requestedBy?: Identity): Promise<Retried> {
  const found = await readExecutionState(deps.db, deps.cache, id);
  const snapshot = found?.follower.snapshot;
  if (!found || !snapshot) throw notFound(`execution ${id}`);
  if (UNFINISHED.has(found.row.status)) throw new ServiceError('conflict', `execution ${id} is ${found.row.status}: retry it once it has finished`);
  const ctx = snapshot.context;
  const from = fromStep ?? ctx.finished?.error?.step ?? (found.row.status === 'cancelled' ? cutShort(found.follower) : undefined);
  if (!from) {
    throw new ServiceError('unprocessable', { message: `execution ${id} did not fail at a step: say which step to retry from`, errors: ['from_step: required: the execution has no failed step'] });
  }
  const pb = found.follower.compiled.playbook;
  const steps = pb.workflow.map((s) => s.step);
  if (!steps.includes(from)) throw new ServiceError('unprocessable', { message: `playbook ${found.row.path} has no step ${from}`, errors: [`from_step: not a step of ${found.row.path} (its steps: ${steps.join(', ')})`] });
  // A step the execution never reached: every step that ended would be replayed, taking the same
  // arcs, and the retry would run nothing from it (a step another arc leads to, say).
  const reached = from === pb.entry || from === ctx.finished?.error?.step || ctx.completedSteps.includes(from) || found.follower.view()?.steps[from]?.status === 'cancelled';
  if (!reached) {
    const ran = ctx.completedSteps.join(', ') || 'none';
    throw new ServiceError('unprocessable', { message: `execution ${id} never ran step ${from}: retry it from a step it ran`, errors: [`from_step: step ${from} did not run in execution ${id} (steps that ran: ${ran})`] });
  }
  // Steps in the order they first ended: those before `from` are taken as they were, if they
  // ended ok or timed out waiting (an arc took the timeout: the wait is not waited again), not
  // the one whose failure ended the execution, nor one that ended in error (run again).
  const replay: Record<string, StepOutcome> = {};
  for (const name of ctx.completedSteps) {
    if (name === from) break;
    const outcome = ctx.steps[name];
    if ((outcome?.status === 'ok' || outcome?.status === 'timeout') && name !== ctx.finished?.error?.step) replay[name] = outcome;
  }
  // Started as the old one was asked for: its labels (label filters find both) and its priority.
  const asked = await startAsked(deps.db, id);
  const [started] = await startExecutions(deps, [
    {
      compiled: found.follower.compiled,
      payload: ctx.input.args,
      requestedBy,
      origin: { retry_of: id, from_step: from, ...(asked.labels ? { labels: asked.labels } : {}) },
      replay,
      ...(asked.priority === undefined ? {} : { priority: asked.priority }),
      ownHandles: true,
      successor: true,
    },
  ]);
  if (started instanceof ServiceError) throw started;
  return { execution_id: started.executionId, retry_of: id, from_step: from, replayed: Object.keys(replay) };
}

/**
 * A cancelled execution did not fail at a step, and is retried where it stopped (an execution
 * auto-resume cancelled and could not start again is `svc retry`'d, docs/operations.md): the
 * first step, in playbook order, the cancel cut short; its entry when it was cancelled before
 * any step began (queued).
 */
function cutShort(follower: ExecutionFollower): string {
  const steps = follower.view()?.steps ?? {};
  const pb = follower.compiled.playbook;
  return pb.workflow.find((s) => steps[s.step]?.status === 'cancelled')?.step ?? pb.entry;
}
