import type { EngineDeps } from '../../actors/engine-deps.ts';
import { readExecutionState } from '../../actors/execution-state.ts';
import { routeEvents } from '../../actors/route-events.ts';
import { MAX_KEPT_SIGNAL_BYTES, MAX_KEPT_SIGNALS } from '../../actors/route-report.ts';
import { CODE } from '../../machines/error-codes.ts';
import { EVENT } from '../../machines/event-types.ts';
import { isLiveExecutionStatus } from '../../machines/statuses.ts';
import type { ExecutionContext } from '../../machines/execution/types.ts';
import type { NormalizedPlaybook, WaitSpec } from '../dsl/parse-playbook.ts';
import type { Identity } from '../auth/identity.ts';
import { admitsSignal, DEFAULT_SIGNAL_ROLES, type Role } from '../auth/roles.ts';
import { notFound, ServiceError } from '../errors.ts';
import { keyOf, numberOf } from '../../machines/execution/keys.ts';
import { keepersAhead } from '../../machines/execution/keepers-ahead.ts';

/** What a signal did: ended the step waiting for it, or was kept for a step that will (`buffer: true`). */
/** `step`: the step it ended, or (buffered) the step that will take it. */
export type Signalled = { status: 'delivered' | 'buffered'; execution_id: number; signal: string; step: string; event_id: number };

/** An idempotency key for the signal, written with it; its stored answer is `answer(signalled)`. */
export type SignalKey = { scope: string; key: string; requestHash: string; statusCode: number };

/**
 * Sends signal `name` with `payload` to an execution (POST /api/executions/{id}/signals/{name}):
 * to the step that has waited for it longest (lowest seq) of those whose `approval.roles`
 * (operator when it names none) admit `by`, or, when none waits and a step says `buffer: true`,
 * kept for it. 403 when every step that waits for it (or would keep it) excludes `by`; 409 (not_waiting) when no step waits for it; 409 (signal_buffer_full),
 * nothing stored, when it would be kept and the execution keeps MAX_KEPT_SIGNALS already, or its
 * payload with those kept would be over MAX_KEPT_SIGNAL_BYTES. Routing decides against the state it writes over: when
 * the wait it was aimed at ended meanwhile, it is aimed again at what waits then (MAX_ATTEMPTS).
 * `signal.received` records who sent it (`by`, `requested_by`).
 */
export async function signalExecution(deps: EngineDeps, id: number, name: string, payload: unknown, by: Identity | undefined, key?: SignalKey): Promise<Signalled> {
  for (let attempt = 1; ; attempt++) {
    const sent = await signalOnce(deps, id, name, payload, by, key);
    if ('event_id' in sent) return sent;
    // The wait it was aimed at ended meanwhile (another signal took it, it timed out): aimed
    // again at what waits now, as another step waiting for the same name would take it.
    if (attempt >= MAX_ATTEMPTS) throw refuse(deps, `signal '${name}' was not delivered: ${sent.moved}`);
  }
}

/** Attempts of one signal whose target's wait ended between the read and the routing. */
const MAX_ATTEMPTS = 5;

/** One read and routing of a signal: what it did, or (`moved`) why the wait it was aimed at no longer takes it. */
async function signalOnce(deps: EngineDeps, id: number, name: string, payload: unknown, by: Identity | undefined, key: SignalKey | undefined): Promise<Signalled | { moved: string }> {
  const found = await readExecutionState(deps.db, deps.cache, id);
  const snapshot = found?.follower.snapshot;
  if (!found || !snapshot) throw notFound(`execution ${id}`);
  if (!isLiveExecutionStatus(found.row.status)) throw refuse(deps, `execution ${id} is ${found.row.status}: no step waits for signal '${name}'`);
  const pb = found.follower.compiled.playbook;
  const target = signalTarget(pb, snapshot.context, name, by?.role ?? null);
  if (!target) throw refuse(deps, `no step of execution ${id} waits for signal '${name}' now${whyNotKept(pb, name)}`);
  // A step without approval roles takes signals from operators (as any other control of an execution).
  const roles = target.wait.kind === 'signal' ? target.wait.roles : null;
  if (!admitsSignal(roles, by?.role)) {
    deps.metrics.signalsReceived.inc({ outcome: 'forbidden' });
    throw new ServiceError('forbidden', { code: 'forbidden', message: `step ${target.step} takes signal '${name}' from ${(roles ?? DEFAULT_SIGNAL_ROLES).join(' or ')} only; the caller is ${by?.role ?? 'no role'}` });
  }
  const status = target.seq === null ? 'buffered' : 'delivered';
  const answer = (eventId: number): Signalled => ({ status, execution_id: id, signal: name, step: target.step, event_id: eventId });
  const { results } = await routeEvents(
    deps,
    [{
      execution_id: id,
      event_type: EVENT.signalReceived,
      step: target.seq === null ? null : target.step,
      // `role`: a kept signal is taken only by a step whose approval admits its sender (machines/execution/step-wait.ts).
      context: { signal: name, seq: target.seq, by: by?.sub ?? null, role: by?.role ?? null, ...(by ? { requested_by: by } : {}), ...(target.seq === null ? { buffered: true } : {}) },
      result: payload ?? null,
    }],
    {
      // Read afresh, as the target was: another server may have moved the execution on since this
      // one held it, and a signal found not to apply writes nothing for a guard to correct.
      wake: [id],
      idempotencyKey: key && (([r]) => (r.event_id === null ? null : { scope: key.scope, key: key.key, request_hash: key.requestHash, execution_id: id, status_code: key.statusCode, response: JSON.stringify(answer(r.event_id)) })),
    },
  );
  const r = results[0];
  if (r.event_id === null) {
    if (r.error !== CODE.signal_buffer_full) return { moved: r.detail };
    deps.metrics.signalsReceived.inc({ outcome: 'buffer_full' });
    // Both bounds, whichever was met (the message says which): a client can tell how far to wait.
    throw new ServiceError('signal_buffer_full', { code: 'signal_buffer_full', message: r.detail, limit: MAX_KEPT_SIGNALS, limit_bytes: MAX_KEPT_SIGNAL_BYTES });
  }
  deps.metrics.signalsReceived.inc({ outcome: status });
  return answer(r.event_id);
}

type Target = { step: string; seq: number | null; wait: WaitSpec };

/**
 * The step a signal goes to: of the steps waiting for it, the one waiting longest whose approval
 * admits a sender of `role`, else the one waiting longest (whose roles then refuse it: 403); when
 * none waits, (seq null) the nearest step ahead that keeps it and admits the sender, else the
 * nearest that keeps it (refused as well): the machine's own reading of which steps may still take
 * it (keepersAhead); a step that keeps it but is not ahead any more would never take it, and
 * none ahead is no target (409). A step that would refuse the caller does not stand in the way of
 * another waiting step that admits them.
 */
function signalTarget(pb: NormalizedPlaybook, ctx: ExecutionContext, name: string, role: Role | null): Target | undefined {
  let best: Target | undefined;
  let admitting: Target | undefined;
  for (const [seq, p] of Object.entries(ctx.pending)) {
    if (p.kind !== 'wait' || p.signal !== name) continue;
    const step = ctx.runs[keyOf(p.run)]?.step;
    const wait = pb.workflow.find((s) => s.step === step)?.wait;
    if (step === undefined || !wait) continue;
    const t = { step, seq: numberOf(seq), wait };
    if (!best || t.seq < (best.seq ?? Infinity)) best = t;
    if (admitsSignal(wait.kind === 'signal' ? wait.roles : null, role) && (!admitting || t.seq < (admitting.seq ?? Infinity))) admitting = t;
  }
  if (best) return admitting ?? best;
  const keepers = keepersAhead(pb, ctx, name);
  const keeper = keepersAhead(pb, ctx, name, role)[0] ?? keepers[0];
  return keeper?.wait && { step: keeper.step, seq: null, wait: keeper.wait };
}

/** The end of a 409's message: that no step keeps the signal, or that those that do are behind the execution. */
function whyNotKept(pb: NormalizedPlaybook, name: string): string {
  const keepers = pb.workflow.filter((s) => s.wait?.kind === 'signal' && s.wait.signal === name && s.wait.buffer).map((s) => s.step);
  if (!keepers.length) return ' (and none keeps it: buffer: true)';
  return ` (and no step that keeps it, ${keepers.join(', ')}, is ahead of it to take it: nothing was kept)`;
}

function refuse(deps: EngineDeps, message: string): ServiceError {
  deps.metrics.signalsReceived.inc({ outcome: 'not_waiting' });
  return new ServiceError('not_waiting', { code: 'not_waiting', message });
}
