/**
 * `work`'s value, or `fallback` as soon as `signal` aborts first. The work itself goes on, for
 * whoever else awaits it (a keychain token request shared by several commands).
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal, fallback: T): Promise<T> {
  if (signal.aborted) return Promise.resolve(fallback);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => resolve(fallback);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
