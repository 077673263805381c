import type { Queryable } from '../db/queryable.ts';
import { startEvent } from '../db/execution.repo.ts';
import { isObject } from '../objects.ts';

/** What an execution's start asked for, as its execution.started records it. */
export type StartAsked = {
  /** The start's payload (the request's, or a child's rendered args). */
  payload: Record<string, unknown>;
  /** The labels it was started with; absent when none. */
  labels?: Record<string, unknown>;
  /** Its priority (0..9), when one is recorded. */
  priority?: number;
};

/**
 * The payload, labels and priority execution `executionId` was started with: what a successor
 * (auto-resume's restart, a retry) is started with again, so that it is found by the same label
 * filters and claimed at the same priority.
 */
export async function startAsked(q: Queryable, executionId: number): Promise<StartAsked> {
  const context = objectOf((await startEvent(q, executionId))?.context);
  const input = objectOf(context.input);
  const labels = objectOf(context.labels);
  return {
    payload: objectOf(input.args),
    ...(Object.keys(labels).length ? { labels } : {}),
    ...(typeof input.priority === 'number' && Number.isInteger(input.priority) ? { priority: input.priority } : {}),
  };
}

function objectOf(value: unknown): Record<string, unknown> {
  return isObject(value) ? { ...value } : {};
}
