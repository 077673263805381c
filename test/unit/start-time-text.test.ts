// GET /api/executions?started_after=garbage answered two problems, the second ("must name a real
// day") wrong for a text that is no date at all: the calendar check ran after the format failed.
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { StartTimeText } from '../../src/start-time-text.ts';

const messages = (text: string) => v.safeParse(StartTimeText, text).issues?.map((i) => i.message) ?? [];

describe('a start time as text', () => {
  it('that is no date says so, once', () => {
    expect(messages('garbage')).toEqual(['must be an ISO 8601 date or date-time with a zone']);
  });

  it('that names no real day says that', () => {
    expect(messages('2026-02-30')).toEqual(['must name a real day']);
    expect(messages('2026-02-30T10:00:00Z')).toEqual(['must name a real day']);
  });

  it('that is a date or a date-time with a zone passes', () => {
    expect(messages('2026-02-28')).toEqual([]);
    expect(messages('2026-02-28T10:00:00+01:00')).toEqual([]);
  });
});
