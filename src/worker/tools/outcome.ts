import * as v from 'valibot';
import type { TaskOutcomeCode } from '../../../machines/error-codes.ts';
import type { TaskOutcome } from './types.ts';

/** A successful outcome carrying `data`. */
export function ok(data: unknown): TaskOutcome {
  return { status: 'ok', data };
}

/** An error outcome; `data` is kept so that arcs can still look at what the target answered. */
export function fail(code: TaskOutcomeCode, message: string, data: unknown = null): TaskOutcome {
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

/** The abort reason a worker gives a command the server cancelled (its heartbeat answer named it). */
export function commandCancelled(): Error {
  const e = new Error('command cancelled');
  e.name = 'CommandCancelled';
  return e;
}

/** The abort reason a worker gives a command another claim took over (its heartbeat answer named it). */
export function commandSuperseded(): Error {
  const e = new Error('command taken over');
  e.name = 'CommandSuperseded';
  return e;
}

/** The outcome for a task that ran past its `timeout_seconds`, however it was stopped. */
export function timedOut(data: unknown = null): TaskOutcome {
  return fail('timeout', 'task timed out', data);
}

/**
 * The outcome for a task cut short by its signal: `timeout` when `timeout_seconds` ran out (a
 * TimeoutError), `cancelled` when its command was cancelled, `aborted` when the worker stopped.
 */
export function aborted(signal: AbortSignal, data: unknown = null): TaskOutcome {
  const reason: unknown = signal.reason;
  const name = reason instanceof Error ? reason.name : '';
  if (name === 'TimeoutError') return timedOut(data);
  if (name === 'CommandCancelled') return fail('cancelled', 'task stopped: its command was cancelled', data);
  if (name === 'CommandSuperseded') return fail('aborted', 'task stopped: another worker took its command over while this one was silent', data);
  return fail('aborted', 'task aborted before it finished: the worker stopped', data);
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
