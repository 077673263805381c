import type { NormalizedPlaybook } from '../../src/dsl/parse-playbook.ts';
import { openRouteFor, routeIn, type RouteState } from './arcs.ts';
import { endedRun, hasRoom, loopOver, runCount, someRun } from './run-summary.ts';
import { EVENT } from '../event-types.ts';
import type { ExecutionContext, ExecutionEvent } from './types.ts';
import { keyOf } from './keys.ts';
import { keepersAhead } from './keepers-ahead.ts';

// The conditions of the execution statechart's transitions (named in machines/playbook-statechart.ts),
// pure: they read the context only. Every one but `failing` is false once the execution has an
// end, so `running`'s own transitions (to failed) take over.

export type ArcParams = { from: string; index: number; when?: string; mode: 'exclusive' | 'inclusive' };
export type StepParams = { step: string };
/** `status` error: the run did not end ok (an error, or a wait that timed out). */
export type RunEndedParams = { step: string; status?: 'ok' | 'error'; last: boolean };

/** The guards, given the playbook whose arcs they evaluate. */
export function executionGuards(pb: NormalizedPlaybook) {
  // Signal names some step keeps when sent before it waits (`buffer: true`).
  const keptSignals = new Set(pb.workflow.flatMap((s) => (s.wait?.kind === 'signal' && s.wait.buffer ? [s.wait.signal] : [])));
  const routeGuard = (state: RouteState) => (ctx: ExecutionContext, p: StepParams) =>
    !ctx.finished && ctx.routes.length > 0 && routeIn(pb, ctx.routes, p.step, state) !== undefined;
  return {
    /** An input event about a command (or child) still pending: anything else changes nothing. */
    pendingCommand: (ctx: ExecutionContext, ev: ExecutionEvent) => 'seq' in ev && ev.seq !== null && Object.hasOwn(ctx.pending, keyOf(ev.seq)),
    /**
     * A signal for no step in particular that a step still ahead keeps until it waits (`buffer:
     * true`) and would take from its sender: kept for none, it would never be taken.
     */
    bufferable: (ctx: ExecutionContext, ev: ExecutionEvent) =>
      !ctx.finished && ev.type === EVENT.signalReceived && ev.seq === null && keptSignals.has(ev.signal.name) && keepersAhead(pb, ctx, ev.signal.name, ev.signal.role).length > 0,
    /** Not paused (execution.paused pauses it). */
    unpaused: (ctx: ExecutionContext) => !ctx.paused,
    /** Paused (execution.resumed resumes it). */
    paused: (ctx: ExecutionContext) => ctx.paused,
    /** The entry step, once: when the execution starts (nothing run yet), or once it is admitted. */
    entry: (ctx: ExecutionContext) => !ctx.finished && ctx.nextRun === 1 && !ctx.queued,
    /** Not admitted yet (execution.admitted admits it). */
    queued: (ctx: ExecutionContext) => !ctx.finished && ctx.queued,
    /** Arc `index` of step `from` fires: its `when` holds over the scope `from`'s run ended with (exclusive: and no earlier arc's does). */
    arc: (ctx: ExecutionContext, p: ArcParams) => !ctx.finished && ctx.routes.length > 0 && openRouteFor(pb, ctx.routes, p.from, p.index) !== undefined,
    /** A run of the step is over (with that status; the step's last run or not). */
    runEnded: (ctx: ExecutionContext, p: RunEndedParams) => {
      if (ctx.finished) return false;
      const ended = endedRun(ctx, p.step);
      if (!ended) return false;
      if (p.status && (ended.outcome!.status === 'ok') !== (p.status === 'ok')) return false;
      return p.last === (runCount(ctx, p.step) === 1);
    },
    /** A loop of the step may launch items (fewer than max_in_flight in flight, none failed, items left). */
    loopHasRoom: (ctx: ExecutionContext, p: StepParams) => !ctx.finished && someRun(ctx, p.step, hasRoom),
    /** A loop of the step has nothing in flight and nothing more to launch. */
    loopDone: (ctx: ExecutionContext, p: StepParams) => !ctx.finished && someRun(ctx, p.step, loopOver),
    /** A `when` or `set` of the step's arcs failed to render. */
    arcError: routeGuard('error'),
    /** The step ended in error and none of its arcs matched. */
    unhandledFailure: routeGuard('unhandled'),
    /** The step's ended run fires no arc and succeeded: its branch ends (routes whose arcs fire are dropped by takeArc). */
    routed: routeGuard('routed'),
    /** The execution failed (a failure no arc handled, an arc error, a cycle). */
    failing: (ctx: ExecutionContext) => ctx.finished?.status === 'failed',
    /** Nothing runs, nothing is pending, no arc is left to follow: the execution completed. */
    allDone: (ctx: ExecutionContext) =>
      !ctx.finished && ctx.nextRun > 1 && ctx.routes.length === 0 && isEmpty(ctx.runs) && isEmpty(ctx.pending),
  };
}

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}
