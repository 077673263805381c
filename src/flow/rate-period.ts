// A rate's period (DESIGN.md "Flow control"): from a millisecond to a day, in whole milliseconds,
// as PUT /api/limits takes it (`rate.period_seconds`) and `svc limits set --rate N/PERIOD` says it.
// The claim refills a key by elapsed * limit / period_seconds: a period near zero overflowed float8
// there (1e-306 s), and that one statement hands out every command (migrations/0039 holds the
// floor). Whole milliseconds: what `svc limits` prints a period as (1m30s, 500ms) is then the
// period itself, and `--rate 5/0.5ms` is refused instead of becoming 5/1ms.

export const MIN_PERIOD_SECONDS = 0.001;
export const MAX_PERIOD_SECONDS = 86_400;

/** What a period must be, for 4xx details and usage errors. */
export const WHOLE_MS_RULE = 'must be a whole number of milliseconds (0.001 s steps)';

/** `ms` as whole milliseconds, or undefined when it has a fraction of one (a float's last digit aside: 0.007 s is 7.000000000000001 ms). */
export function wholeMs(ms: number): number | undefined {
  const whole = Math.round(ms);
  return Math.abs(ms - whole) < 1e-6 ? whole : undefined;
}
