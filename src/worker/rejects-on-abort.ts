/** Rejects with the signal's reason once it aborts: raced against a request, it ends the wait for an answer. */
export function rejectsOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, fail) => {
    if (signal.aborted) fail(signal.reason);
    else signal.addEventListener('abort', () => fail(signal.reason), { once: true });
  });
}
