// A cron number out of its field's range was refused in croner's words, after its offsets: a
// month 13 was said to be "Invalid value for month: 12", a day 0 "day: -1", values nobody wrote.
// The problem now names the field and the number as written, with the field's range.
import { describe, expect, it } from 'vitest';
import { cronProblem } from '../../../src/triggers/cron-schedule.ts';

const problem = (cron: string) => cronProblem(cron, 'UTC');

describe('a cron number out of range', () => {
  it('is named as written, with its field and range', () => {
    expect(problem('0 0 * 13 *')).toEqual({ field: 'cron', message: "'0 0 * 13 *' is not a cron expression: month 13 is out of range (1-12)" });
    expect(problem('0 0 0 * *')).toEqual({ field: 'cron', message: "'0 0 0 * *' is not a cron expression: day 0 is out of range (1-31)" });
    expect(problem('0 0 1-32 * *')?.message).toContain('day 32 is out of range (1-31)');
    expect(problem('0 0 * 0,6 *')?.message).toContain('month 0 is out of range (1-12)');
    expect(problem('0 24 * * *')?.message).toContain('hour 24 is out of range (0-23)');
    expect(problem('60 * * * *')?.message).toContain('minute 60 is out of range (0-59)');
    expect(problem('0 0 * * 8')?.message).toContain('weekday 8 is out of range (0-7)');
    expect(problem('60 0 0 * * *')?.message).toContain('second 60 is out of range (0-59)');
  });

  it('leaves what croner reads well alone', () => {
    for (const cron of ['0 0 L * *', '0 0 1W * *', '0 0 * * 5#2', '0 0 * * 1L', '0 0 * JAN-DEC MON-FRI', '*/15 9-17 * * 1-5', '0 0 ? * *', '0 0 * * 7', '0 0 29 2 *']) {
      expect(problem(cron), cron).toBeUndefined();
    }
  });
});
