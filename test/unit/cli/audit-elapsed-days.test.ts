// A wait's time far away was written in hours only: a timer a year off read `(in 8760h00m)` and
// one until 9999 `(in 69890560h11m)` in svc status; a week-long run's elapsed time `168h00m`.
// Past a day it is now days and hours, past a year years and days.
import { describe, expect, it } from 'vitest';
import { formatElapsed } from '../../../src/cli/progress-view.ts';
import { whenText } from '../../../src/cli/triggers-table.ts';

const S = 1000;
const H = 3600 * S;
const D = 24 * H;

describe('formatElapsed', () => {
  it('keeps seconds, minutes and hours under a day', () => {
    expect(formatElapsed(0.4 * S)).toBe('0.4s');
    expect(formatElapsed(125 * S)).toBe('2m05s');
    expect(formatElapsed(H + 2 * 60 * S)).toBe('1h02m');
    expect(formatElapsed(D - S)).toBe('23h59m');
  });

  it('writes days and hours past a day, years and days past a year', () => {
    expect(formatElapsed(D)).toBe('1d00h');
    expect(formatElapsed(7 * D + 4 * H + 59 * 60 * S)).toBe('7d04h');
    expect(formatElapsed(365 * D)).toBe('1y000d');
    expect(formatElapsed(2 * 365 * D + 17 * D + 5 * H)).toBe('2y017d');
  });

  it('shows a timer until the year 9999 in years', () => {
    const now = Date.parse('2026-12-03T08:00:00Z');
    expect(whenText('9999-12-31T00:00:00Z', now)).toMatch(/^9999-12-31T00:00:00Z \(in 797[0-9]y\d{3}d\)$/);
  });
});
