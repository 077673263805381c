import type { Queryable } from '../db/queryable.ts';
import { admittedEvent, startEvent } from '../db/execution.repo.ts';
import { askedOf, type StartAsked } from './asked-of.ts';

/**
 * The payload, labels and priority execution `executionId` was started with: what a successor
 * (auto-resume's restart, a retry) is started with again, so that it is found by the same label
 * filters and claimed at the same priority (askedOf: from its two events).
 */
export async function startAsked(q: Queryable, executionId: number): Promise<StartAsked> {
  const [started, admitted] = await Promise.all([startEvent(q, executionId), admittedEvent(q, executionId)]);
  return askedOf(started, admitted);
}
