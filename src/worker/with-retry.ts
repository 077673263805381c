import { setTimeout as delay } from 'node:timers/promises';
import type { TaskOutcome } from './tools/types.ts';
import { attemptsOf, retryDelayMs, type RetryPolicy } from '../dsl/retry-delay-ms.ts';

export { retryDelayMs, type RetryPolicy };

/** One attempt of a task: its number (1..), when it began and ended (performance.now()), how long it ran, what it gave. */
export type Attempt = { attempt: number; startedAt: number; endedAt: number; durationMs: number; outcome: TaskOutcome };

/**
 * Runs `run` up to `retry.attempts` times while `shouldRetry(outcome)` holds, waiting
 * `delay_seconds * backoff^(n-1)` (capped by max_delay_seconds) after the n-th failure. An abort
 * stops the waiting and the retrying; the last outcome is returned with the attempts made.
 * `onAttempt` hears of each attempt as it ends.
 */
export async function withRetry(
  run: (attempt: number) => Promise<TaskOutcome>,
  retry: RetryPolicy,
  shouldRetry: (outcome: TaskOutcome) => boolean,
  signal: AbortSignal,
  sleep: (ms: number) => Promise<void> = (ms) => delay(ms, undefined, { signal }),
  onAttempt?: (tried: Attempt) => void,
): Promise<TaskOutcome & { attempts: number }> {
  const attempts = attemptsOf(retry);
  for (let attempt = 1; ; attempt++) {
    const startedAt = performance.now();
    const outcome = await runSafely(run, attempt);
    const endedAt = performance.now();
    onAttempt?.({ attempt, startedAt, endedAt, durationMs: Math.round(endedAt - startedAt), outcome });
    if (outcome.status === 'ok' || attempt >= attempts || signal.aborted || !shouldRetry(outcome)) return { ...outcome, attempts: attempt };
    await abortable(sleep(retryDelayMs(retry, attempt)), signal);
    if (signal.aborted) return { ...outcome, attempts: attempt };
  }
}

// A throwing run is a bug elsewhere, but it must count as a failed attempt, not escape the worker.
async function runSafely(run: (attempt: number) => Promise<TaskOutcome>, attempt: number): Promise<TaskOutcome> {
  try {
    return await run(attempt);
  } catch (error) {
    return { status: 'error', data: null, error: { message: error instanceof Error ? error.message : String(error), code: 'internal' } };
  }
}

// Resolves when the sleep ends (or rejects, as the default one does on abort) or the signal aborts.
function abortable(sleeping: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    sleeping.then(done, done);
  });
}
