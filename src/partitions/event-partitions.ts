import type { Db } from '../db/db.ts';
import { createEventRange, dropEventRange, eventRanges, lastExecutionId, rangeEvents, rangeExecutions, rangeExpired, type ArchivedEvent, type EventRange } from '../db/partition.repo.ts';
import type { Logger } from '../log.ts';
import type { PeriodicSpec } from '../periodic/every.ts';
import { writeArchive } from './archive-file.ts';

// The event log's ranges kept (DESIGN.md "Scale-out"; migrations/0023_event_partitions.sql): ahead
// of the execution id sequence, RANGES_AHEAD ranges of SVC_EVENT_PARTITION_EXECUTIONS ids are made
// (never on the hot path: a start finds its range there); with SVC_RETENTION_DAYS, a range whose
// executions all finished longer ago is archived (with SVC_ARCHIVE_DIR) and dropped, the oldest
// first, the range in use never. One server of many does it (a lease), at start and then every
// SVC_PARTITION_INTERVAL_SECONDS.

/** Ranges made beyond the one the next execution id falls in. */
export const RANGES_AHEAD = 2;
/** Events read per page when a range is archived. */
const ARCHIVE_PAGE_EVENTS = 5_000;
const LEASE_TTL_SECONDS = 600;

export type PartitionSettings = { width: number; retentionDays: number | null; archiveDir: string | null };

/** The periodic spec: at once at start (a fresh database gets its ranges), then every `intervalSeconds`. */
export function eventPartitionsSpec(intervalSeconds: number): PeriodicSpec {
  return { name: 'event_partitions', intervalMs: intervalSeconds * 1000, firstDelayMs: 0, lease: { ttlSeconds: LEASE_TTL_SECONDS } };
}

export type PartitionReport = { made: EventRange[]; dropped: { range: EventRange; executions: number; archive: string | null }[] };

/** One run: makes the ranges ahead, then drops (archiving first) the expired ones. */
export async function keepEventPartitions(deps: { db: Db; log: Logger }, s: PartitionSettings): Promise<PartitionReport> {
  const made = await makeAhead(deps.db, s.width);
  if (made.length) deps.log.info({ ranges: made }, 'event log ranges made ahead');
  const dropped: PartitionReport['dropped'] = [];
  if (s.retentionDays !== null) {
    const ranges = await eventRanges(deps.db);
    // The last range holds the newest ids (or is ahead): never a candidate.
    for (const r of ranges.slice(0, -1)) {
      if (!(await rangeExpired(deps.db, r, s.retentionDays))) break;
      const archive = s.archiveDir === null ? null : (await archiveRange(deps.db, r, s.archiveDir)).path;
      const executions = await dropEventRange(deps.db, r);
      dropped.push({ range: r, executions, archive });
      deps.log.info({ range: r, executions, archive }, 'event log range dropped by retention');
    }
  }
  return { made, dropped };
}

/** Makes every range from the end of the last one until RANGES_AHEAD ranges lie past the last execution id. */
async function makeAhead(db: Db, width: number): Promise<EventRange[]> {
  const [ranges, last] = await Promise.all([eventRanges(db), lastExecutionId(db)]);
  let lo = ranges.at(-1)?.hi ?? 0;
  const made: EventRange[] = [];
  while (lo <= last + RANGES_AHEAD * width) {
    const r = { lo, hi: lo + width };
    if (await createEventRange(db, r)) made.push(r);
    lo = r.hi;
  }
  return made;
}

async function archiveRange(db: Db, r: EventRange, dir: string): Promise<{ path: string; events: number }> {
  const executions = await rangeExecutions(db, r);
  let after = { execution: r.lo - 1, event: 0 };
  return writeArchive(dir, r, {
    executions,
    async nextEvents(): Promise<ArchivedEvent[]> {
      const page = await rangeEvents(db, r, after, ARCHIVE_PAGE_EVENTS);
      const last = page.at(-1);
      if (last) after = { execution: last.execution_id, event: last.event_id };
      return page;
    },
  });
}
