import { useCallback, useEffect, useRef, useState } from 'react';

export type Loaded<T> = { data: T | undefined; error: Error | undefined; loading: boolean; reload: () => void };

/**
 * Runs `load` now and, while `everyMs` is a number, again that long after each answer (live
 * views); a change of `deps` starts over. Answers of superseded runs are dropped.
 */
export function usePoll<T>(load: (signal: AbortSignal) => Promise<T>, everyMs: number | null, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const value = await loadRef.current(abort.signal);
        if (abort.signal.aborted) return;
        setData(value);
        setError(undefined);
      } catch (e) {
        if (abort.signal.aborted) return;
        setError(e instanceof Error ? e : new Error(String(e)));
      }
      setLoading(false);
      if (everyMs !== null && !abort.signal.aborted) timer = setTimeout(run, everyMs);
    };
    setLoading(true);
    void run();
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, everyMs, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/**
 * Keyboard focus through a call: a button disabled while its call runs loses focus, and the page's
 * body kept it (Tab then started from the top). Call the returned `hold` as the call starts; once
 * `busy` is over, focus goes back to what had it, unless something else took it meanwhile.
 */
export function useFocusBack(busy: boolean): () => void {
  const held = useRef<Element | null>(null);
  useEffect(() => {
    const element = held.current;
    if (busy || !element) return;
    held.current = null;
    const at = document.activeElement;
    if (element instanceof HTMLElement && element.isConnected && (!at || at === document.body)) element.focus();
  });
  return useCallback(() => {
    held.current = document.activeElement;
  }, []);
}

/** Epoch milliseconds, ticking every `everyMs` while it is a number (what runs grows: bars, durations). */
export function useNow(everyMs: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (everyMs === null) return;
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return everyMs === null ? now : Math.max(now, Date.now());
}
