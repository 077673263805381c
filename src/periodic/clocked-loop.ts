import type { Logger } from '../log.ts';
import type { WaitClock } from '../waits/wait-clock.ts';
import { failureLog } from './failure-log.ts';

/**
 * One look of a clocked loop: does its work and answers how long to sleep before the next (ms;
 * 0: look again at once).
 */
export type Look = () => Promise<number>;

/**
 * Runs `look` until stopped, sleeping between looks as long as it answered (at most `maxSleepMs`),
 * ended early by a nudge of `clock` for a time sooner than the sleep's end. A nudge heard mid-look
 * ends the next sleep by its time, so none is lost. A look that throws is logged as `what` (as
 * failureLog says: not at every look while the database is away) and the next comes after
 * `maxSleepMs`. The timekeeper of waits and the admitter of flow control keep
 * their own time this way (not `every`: their next look is the earliest due time, not an interval).
 */
export function clockedLoop(log: Logger, what: string, clock: WaitClock, maxSleepMs: number, look: Look): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wakeUp: (() => void) | undefined;
  let sleepingUntil = Infinity;
  let nudgedAt = Infinity;
  const failures = failureLog(log, what);
  const wake = () => {
    clearTimeout(timer);
    wakeUp?.();
  };
  clock.listen((atMs) => {
    if (sleepingUntil === Infinity) nudgedAt = Math.min(nudgedAt, atMs);
    else if (atMs < sleepingUntil) wake();
  });
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      sleepingUntil = Date.now() + ms;
      wakeUp = resolve;
      timer = setTimeout(resolve, ms);
      timer.unref();
    });
  const loop = (async () => {
    while (!stopped) {
      let sleepMs = maxSleepMs;
      try {
        sleepMs = Math.min(maxSleepMs, await look());
        failures.succeeded();
      } catch (err) {
        if (stopped) break;
        failures.failed(err, `${what} failed; trying again`);
      }
      sleepMs = Math.min(sleepMs, Math.max(0, nudgedAt - Date.now()));
      nudgedAt = Infinity;
      if (!stopped && sleepMs > 0) await sleep(sleepMs);
      sleepingUntil = Infinity;
    }
  })();
  return {
    async stop() {
      stopped = true;
      clock.listen(undefined);
      wake();
      await loop;
    },
  };
}
