import type { NormalizedPlaybook } from '../../src/dsl/parse-playbook.ts';
import { evaluateCondition, renderValue } from '../../src/dsl/render.ts';
import { CODE } from '../error-codes.ts';
import { stepNamed } from './step-index.ts';
import type { Route, TaskError } from './types.ts';

/** What a route's arcs say: the arcs that fire (in arc order), the vars each `set`s, and the first arc that failed to render. */
export type ArcEvaluation = { fired: number[]; sets: Map<number, Record<string, unknown>>; error: { index: number; error: TaskError } | null };

/** Where a route stands: an arc failed to render, a failure (or a timeout) no arc handles, arcs left to take, or done. */
export type RouteState = 'error' | 'unhandled' | 'open' | 'routed';

// Guards of every step region ask about the same route several times per transition: its arcs
// are evaluated once per route (the scope object is made once, when the run ends).
const evaluations = new WeakMap<object, ArcEvaluation>();

/** The error a template or render failure stands for (what a task would report). */
export function errorOf(err: unknown): TaskError {
  if (err instanceof Error) return { message: err.message, code: err.name === 'TemplateError' ? CODE.template_error : CODE.error };
  return { message: String(err), code: CODE.error };
}

/**
 * Evaluates the `next` arcs of the route's step over the scope its run ended with, as DESIGN.md's
 * DSL says: exclusive takes the first arc whose `when` holds, inclusive every one; an arc without
 * `when` holds when the step succeeded. A `when` or `set` that fails to render stops there.
 */
export function evaluateArcs(pb: NormalizedPlaybook, route: Route): ArcEvaluation {
  let ev = evaluations.get(route.scope);
  if (ev) return ev;
  const step = stepNamed(pb, route.step);
  ev = { fired: [], sets: new Map(), error: null };
  for (const [i, arc] of step.next.arcs.entries()) {
    try {
      const fires = arc.when === undefined ? route.outcome.status === 'ok' : evaluateCondition(arc.when, route.scope, `${route.step}.next[${i}].when`);
      if (!fires) continue;
      if (arc.set) {
        const values = renderValue(arc.set, route.scope, `${route.step}.next[${i}].set`);
        if (values && typeof values === 'object') ev.sets.set(i, values as Record<string, unknown>);
      }
    } catch (err) {
      ev.error = { index: i, error: errorOf(err) };
      break;
    }
    ev.fired.push(i);
    if (step.next.mode === 'exclusive') break;
  }
  evaluations.set(route.scope, ev);
  return ev;
}

/** The state of a route (see RouteState). */
export function routeState(pb: NormalizedPlaybook, route: Route): RouteState {
  const ev = evaluateArcs(pb, route);
  if (ev.error) return 'error';
  if (ev.fired.length === 0 && route.outcome.status !== 'ok') return 'unhandled';
  return ev.fired.some((i) => !route.taken.includes(i)) ? 'open' : 'routed';
}

/** Whether arc `index` of step `from` fires for a route still to take it (the first such route). */
export function openRouteFor(pb: NormalizedPlaybook, routes: readonly Route[], from: string, index: number): Route | undefined {
  for (const r of routes) {
    if (r.step !== from || r.taken.includes(index)) continue;
    const ev = evaluateArcs(pb, r);
    if (!ev.error && ev.fired.includes(index)) return r;
  }
  return undefined;
}

/** The first route of a step in the given state. */
export function routeIn(pb: NormalizedPlaybook, routes: readonly Route[], step: string, state: RouteState): Route | undefined {
  for (const r of routes) if (r.step === step && routeState(pb, r) === state) return r;
  return undefined;
}
