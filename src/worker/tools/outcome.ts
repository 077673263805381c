import * as v from 'valibot';
import type { TaskOutcome } from './types.ts';

/** A successful outcome carrying `data`. */
export function ok(data: unknown): TaskOutcome {
  return { status: 'ok', data };
}

/** An error outcome; `data` is kept so that arcs can still look at what the target answered. */
export function fail(code: string, message: string, data: unknown = null): TaskOutcome {
  return { status: 'error', data, error: { message, code } };
}

/**
 * The `invalid_task` outcome for fields that failed validation. Only paths and expectations are
 * named, never the received values: a rendered field may hold a keychain secret.
 */
export function invalidTask(kind: string, issues: readonly v.BaseIssue<unknown>[]): TaskOutcome {
  const parts = issues.map((issue) => {
    const path = v.getDotPath(issue) ?? '(task)';
    if (issue.received === 'undefined') return `${path}: required`;
    // A `check` carries the text written with it in this code base, never the value.
    if (issue.type === 'check') return `${path}: expected ${issue.message}`;
    return `${path}: expected ${issue.expected ?? issue.type}`;
  });
  return fail('invalid_task', `invalid ${kind} task: ${parts.join('; ')}`);
}

/**
 * The outcome for a task cut short by its signal. The worker aborts on `timeout_seconds` (reason a
 * TimeoutError) or on shutdown; both are reported with code `timeout`, the message tells which.
 */
export function aborted(signal: AbortSignal, data: unknown = null): TaskOutcome {
  const reason: unknown = signal.reason;
  const timedOut = reason instanceof Error && reason.name === 'TimeoutError';
  return fail('timeout', timedOut ? 'task timed out' : 'task aborted before it finished', data);
}

/** The most specific text of a thrown value: a network error's cause code (ECONNREFUSED) wins. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
    return code ? `${code} (${cause.message})` : cause.message;
  }
  return error.message;
}
