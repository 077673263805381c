import type { Queryable } from '../db/queryable.ts';
import { admittedEvent, startEvent, type EventRow } from '../db/execution.repo.ts';
import { isObject } from '../objects.ts';

/** What an execution's start asked for, as its execution.started records it. */
export type StartAsked = {
  /** The start's payload (the request's, or a child's rendered args; a debounced execution's last start's). */
  payload: Record<string, unknown>;
  /** The labels it was started with; absent when none. */
  labels?: Record<string, unknown>;
  /** Its priority (0..9), when one is recorded (a debounced execution's last start's). */
  priority?: number;
};

/**
 * The payload, labels and priority execution `executionId` was started with: what a successor
 * (auto-resume's restart, a retry) is started with again, so that it is found by the same label
 * filters and claimed at the same priority (askedOf: from its two events).
 */
export async function startAsked(q: Queryable, executionId: number): Promise<StartAsked> {
  const [started, admitted] = await Promise.all([startEvent(q, executionId), admittedEvent(q, executionId)]);
  return askedOf(started, admitted);
}

/**
 * What a start asked for, from its `execution.started` and first `execution.admitted` (a caller
 * that has the log at hand reads them there). A debounced execution ran with its burst's last
 * start: the payload and priority its `execution.admitted` carries, not its first start's (whose
 * payload later starts replaced: a successor with it would lose theirs).
 */
export function askedOf(started: Pick<EventRow, 'context'> | undefined, admitted: Pick<EventRow, 'context' | 'result'> | undefined): StartAsked {
  const context = objectOf(started?.context);
  const input = objectOf(context.input);
  const labels = objectOf(context.labels);
  const ran = objectOf(admitted?.context);
  const priority = isPriority(ran.priority) ? ran.priority : input.priority;
  return {
    payload: isObject(admitted?.result) ? { ...admitted.result } : objectOf(input.args),
    ...(Object.keys(labels).length ? { labels } : {}),
    ...(isPriority(priority) ? { priority } : {}),
  };
}

const isPriority = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

function objectOf(value: unknown): Record<string, unknown> {
  return isObject(value) ? { ...value } : {};
}
