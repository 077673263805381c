import type { Logger } from '../log.ts';

/** How often a failure that goes on is logged again while it lasts, in ms. */
export const REPEATED_FAILURE_LOG_MS = 60_000;

/** The log of one loop's failures (failureLog). */
export type FailureLog = {
  /** A run failed with `err`: logged as `message` when the failure is new or last logged REPEATED_FAILURE_LOG_MS ago. */
  failed(err: unknown, message: string): void;
  /** A run succeeded: a failure going on until now is logged as over (`what works again`). */
  succeeded(): void;
};

/**
 * The log lines of a loop that tries again after a failure (the scheduler's, the timekeeper's and
 * the admitter's look each second; periodic jobs every few seconds). While the database was away
 * each try logged its failure: 180 lines a minute from the three clocked loops alone, in which an
 * operator's own lines were lost. A failure is now logged when it starts or changes, then once per
 * REPEATED_FAILURE_LOG_MS with the count of failed tries so far, and its end once, at info.
 */
export function failureLog(log: Logger, what: string, fields: Record<string, string> = {}, repeatMs = REPEATED_FAILURE_LOG_MS): FailureLog {
  let failures = 0;
  let loggedAt = 0;
  let loggedText = '';
  return {
    failed(err, message) {
      failures++;
      const text = err instanceof Error ? err.message : String(err);
      const now = performance.now();
      if (failures > 1 && text === loggedText && now - loggedAt < repeatMs) return;
      log.warn({ ...fields, err: text, ...(failures > 1 ? { failures } : {}) }, message);
      loggedAt = now;
      loggedText = text;
    },
    succeeded() {
      if (failures === 0) return;
      log.info({ ...fields, failures }, `${what} works again`);
      failures = 0;
      loggedText = '';
    },
  };
}
