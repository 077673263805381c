// A task's `retry` delays, shared by the worker (src/worker/with-retry.ts) and the server's
// `playbook` tasks (machines/execution/step-work.ts): one computation, so both wait alike.

// setTimeout's largest delay; a longer one would fire at once instead.
const RETRY_DELAY_CEILING_MS = 2_147_483_647;

export type RetryPolicy = { attempts: number; delay_seconds: number; backoff: number; max_delay_seconds?: number };

/** The wait in ms after the `failedAttempt`-th failure: delay * backoff^(n-1), capped. */
export function retryDelayMs(retry: RetryPolicy, failedAttempt: number): number {
  const delaySeconds = finiteOr(retry.delay_seconds, 0);
  const backoff = finiteOr(retry.backoff, 1);
  let seconds = delaySeconds * backoff ** (failedAttempt - 1);
  if (retry.max_delay_seconds !== undefined && Number.isFinite(retry.max_delay_seconds)) seconds = Math.min(seconds, retry.max_delay_seconds);
  if (Number.isNaN(seconds)) return 0;
  return Math.min(Math.max(0, seconds * 1000), RETRY_DELAY_CEILING_MS);
}

/** How many attempts a policy allows (at least one). */
export function attemptsOf(retry: RetryPolicy): number {
  return Number.isFinite(retry.attempts) ? Math.max(1, Math.floor(retry.attempts)) : 1;
}

function finiteOr(value: number, fallback: number): number {
  return Number.isFinite(value) ? value : fallback;
}
