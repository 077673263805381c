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
 * What a start asked for, from its `execution.started` and first `execution.admitted` (a caller
 * that has the log at hand reads them there: a retry, the console's Re-run). A debounced
 * execution ran with its burst's last start: the payload and priority its `execution.admitted`
 * carries, not its first start's (whose payload later starts replaced: a successor with it would
 * lose theirs). Pure, so the console shares it.
 */
export function askedOf(started: { context: unknown } | undefined, admitted: { context: unknown; result: unknown } | undefined): StartAsked {
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
