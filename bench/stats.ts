/** Small statistics helpers for benchmark samples. */

/** The q-quantile (0..1) of samples by linear interpolation between closest ranks. */
export function quantile(samples: readonly number[], q: number): number {
  if (!samples.length) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export const median = (samples: readonly number[]): number => quantile(samples, 0.5);

export const mean = (samples: readonly number[]): number => (samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : Number.NaN);

/** Rounds to `digits` decimals (for JSON and the table). */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));
