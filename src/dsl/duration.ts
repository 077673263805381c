// Durations in a playbook (`wait: { for: 30m }`, `timeout: 24h`): a number of seconds, or text of
// one or more <number><unit> parts, units ms, s, m, h, d (`1h30m`, `90s`, `500ms`). Pure.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;

/** The longest wait a playbook may ask for (a year): a longer one is a mistake in units. */
export const MAX_DURATION_MS = 366 * 86_400_000;

/** Milliseconds of a duration (seconds when a number), or undefined when it is not one (or is negative). */
export function durationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : undefined;
  const ms = typeof value === 'string' ? exactDurationMs(value) : undefined;
  return ms === undefined ? undefined : Math.round(ms);
}

/** Milliseconds of duration text as written, a fraction of one kept (`0.5ms` is 0.5), or undefined when it is not one. */
export function exactDurationMs(value: string): number | undefined {
  if (value === '') return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let end = 0;
  for (let m = PART.exec(value); m; m = PART.exec(value)) {
    total += Number(m[1]) * UNIT_MS[m[2]];
    end = PART.lastIndex;
  }
  return end === value.length ? total : undefined;
}
