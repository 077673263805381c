import type { EngineDeps } from '../../actors/engine-deps.ts';
import { routeEvents } from '../../actors/route-events.ts';
import { EVENT } from '../../machines/event-types.ts';
import type { Identity } from '../auth/identity.ts';
import { claimableCount } from '../db/command.repo.ts';
import { getExecution, type ExecutionStatus } from '../db/execution.repo.ts';
import { notFound, ServiceError } from '../errors.ts';

/** Commands of a resume announced one by one at most: as many as there are servers to wake, with room. */
const MAX_ANNOUNCED = 16;

/** An execution's status after a pause or a resume (`queued`: resumed, it waits for its admission again). */
export type Control = { execution_id: number; status: 'paused' | 'running' | 'queued' };

/**
 * Pauses a running or queued execution (`execution.paused`): from then on it issues no command and
 * starts no child (they are held, in order); commands a worker claimed finish and are recorded, those
 * no worker claimed yet are withdrawn until the resume (status PAUSED, migrations/0047); its
 * timers that come due wait. A queued one keeps its place and is not admitted until the resume
 * (src/db/flow.repo.ts admitQueued). 409 not_waiting unless it is running or queued (the routing
 * decides against the state it writes over).
 */
export async function pauseExecution(deps: EngineDeps, id: number, by: Identity | undefined, reason?: string): Promise<Control> {
  await control(deps, id, EVENT.executionPaused, ['running', 'queued'], by, reason);
  return { execution_id: id, status: 'paused' };
}

/**
 * Resumes a paused execution (`execution.resumed`): what was held is issued, due timers fire; one
 * paused while queued is queued again in its place (`status: queued`, unless admitted since). 409
 * not_waiting unless it is paused.
 */
export async function resumeExecution(deps: EngineDeps, id: number, by: Identity | undefined, reason?: string): Promise<Control> {
  await control(deps, id, EVENT.executionResumed, ['paused'], by, reason);
  // Its waits that came due meanwhile are fireable now; one queued again is this admitter's to look at now.
  deps.waitClock?.nudge(Date.now());
  const now = await getExecution(deps.db, id);
  if (now?.status === 'queued') {
    deps.flowClock?.queued(Date.now());
    return { execution_id: id, status: 'queued' };
  }
  // The commands the pause withdrew are claimable again (migrations/0047, which NOTIFYs where the
  // bus is PostgreSQL's); a bus without NOTIFY hears of them here, one announcement each, since
  // each wakes the claimers of one server (src/bus/nats.ts).
  if (deps.announce) {
    const n = await claimableCount(deps.db, id, MAX_ANNOUNCED);
    deps.announce.commands(Array.from({ length: Math.max(1, n) }, () => id));
  }
  return { execution_id: id, status: 'running' };
}

async function control(deps: EngineDeps, id: number, type: typeof EVENT.executionPaused | typeof EVENT.executionResumed, from: readonly ExecutionStatus[], by: Identity | undefined, reason: string | undefined): Promise<void> {
  const row = await getExecution(deps.db, id);
  if (!row) throw notFound(`execution ${id}`);
  const verb = type === EVENT.executionPaused ? 'pause' : 'resume';
  if (!from.includes(row.status)) throw notWaiting(`execution ${id} is ${row.status}: only a ${from.join(' or ')} execution can be ${verb}d`);
  // Read afresh, not from this server's memory of it: another server may have paused or resumed
  // it since, and a pause or resume found not to apply writes nothing for a guard to correct.
  const { results } = await routeEvents(deps, [{ execution_id: id, event_type: type, context: { ...(by ? { requested_by: by } : {}), ...(reason === undefined ? {} : { reason }) } }], { wake: [id] });
  const r = results[0];
  if (r.event_id === null) throw notWaiting(`execution ${id} cannot be ${verb}d: ${r.detail}`);
}

/** 409 not_waiting (machines/error-codes.ts): a pause of an execution neither running nor queued, a resume of one not paused. */
const notWaiting = (message: string): ServiceError => new ServiceError('not_waiting', { code: 'not_waiting', message });
