import { setTimeout as delay } from 'node:timers/promises';

// A request's own wait (a stream's next poll, the bounded discard of a refused body), ended by
// the request's end: route plugins keep no timer of their own (background work is
// src/periodic's), so a route waits through this and an AbortSignal it owns.

/** Waits `ms`; true when the time passed, false when `signal` aborted first (or had already). */
export async function waitUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch {
    // The one rejection of an abortable delay is its abort.
    return false;
  }
}

/**
 * Asks `check` every `intervalMs()` ms until it names a lapse (returned) or `signal` aborts
 * (undefined): a stream's watch of its caller. A check that throws an error `retry` accepts (the
 * database away) is asked again at the next; any other error is thrown.
 */
export async function watchForLapse(
  check: () => Promise<string | undefined>,
  intervalMs: () => number,
  retry: (err: unknown) => boolean,
  signal: AbortSignal,
): Promise<string | undefined> {
  while (await waitUnlessAborted(intervalMs(), signal)) {
    try {
      const lapse = await check();
      if (lapse !== undefined) return signal.aborted ? undefined : lapse;
    } catch (err) {
      if (!retry(err)) throw err;
    }
  }
  return undefined;
}
