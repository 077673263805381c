// Times the service takes from users and stores: ISO 8601 text that JavaScript would otherwise
// roll over (2027-02-30 read as March 2) or write with an expanded year (+010000-…) that
// PostgreSQL refuses. Pure: the machines read times with it too.

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: the years ISO 8601 text writes with four digits. */
const EARLIEST_MS = -62_135_596_800_000;
const LATEST_MS = 253_402_300_799_999;

/** Whether text starting `YYYY-MM-DD` names a real day (JavaScript rolls 2024-02-30 over to March). */
export function isCalendarDate(text: string): boolean {
  const [y, m, d] = [Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10))];
  // setUTCFullYear, not Date.UTC: that one reads the years 0 to 99 as 1900 to 1999.
  const day = new Date(0);
  day.setUTCFullYear(y, m - 1, d);
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

/** An instant (epoch milliseconds) as ISO text when it lies in the years 0001 to 9999; null otherwise. */
export function isoTimeInRange(ms: number): string | null {
  return Number.isFinite(ms) && ms >= EARLIEST_MS && ms <= LATEST_MS ? new Date(ms).toISOString() : null;
}
