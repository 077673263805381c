import type { Db } from '../db/db.ts';
import { access } from 'node:fs/promises';
import { ID_HOLD_MS } from '../../actors/start-prelude-cache.ts';
import { childRanges, createEventRange, dropEventPartition, dropHeldEventRange, dropRangeRows, dropUnstartedFires, eventRangeEmpty, eventRanges, lastExecutionId, lowestDefaultExecutionId, rangeEvents, rangeExecutions, rangeHoldsExecutions, rangeVerdict, whilePartitionRunHeld, withEventLogHeld, type ArchivedEvent, type ArchivedExecution, type EventRange } from '../db/partition.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import type { Logger } from '../log.ts';
import type { PeriodicSpec } from '../periodic/every.ts';
import { archiveFileOf, archiveMissing, writeArchive } from './archive-file.ts';

// The event log's ranges kept (DESIGN.md "Scale-out"; migrations/0023_event_partitions.sql): ahead
// of the execution id sequence, RANGES_AHEAD ranges of SVC_EVENT_PARTITION_EXECUTIONS ids are made
// (never on the hot path: a start finds its range there); with SVC_RETENTION_DAYS, a range whose
// executions all finished longer ago is archived (with SVC_ARCHIVE_DIR) and dropped, the oldest
// first, the range in use never. One server of many does it (a lease), at start and then every
// SVC_PARTITION_INTERVAL_SECONDS.

/** Ranges made beyond the one the next execution id falls in. */
export const RANGES_AHEAD = 2;
/** Executions, and events, read per page when a range is archived. */
const ARCHIVE_PAGE_ROWS = 5_000;
/**
 * How long after its last id was handed out a range may still get an execution: a server uses
 * ids it fetched ahead for ID_HOLD_MS, and a start's transaction may have begun (its execution's
 * `started_at`) before its ids were fetched; twice that is room for both.
 */
const RANGE_HELD_MS = 2 * ID_HOLD_MS;
/**
 * Rows deleted per transaction when a range goes: a range of a million executions holds tens of
 * millions of rows, which in one transaction would hold its locks and its WAL for minutes.
 */
export const DROP_BATCH_ROWS = 5_000;
const LEASE_TTL_SECONDS = 600;

/**
 * `width`: executions per new range; with `followWidth`, the newest range's width instead
 * (`width` when there is none). `batchRows`: rows deleted per transaction when a range goes
 * (DROP_BATCH_ROWS unless a test says).
 */
export type PartitionSettings = { width: number; followWidth?: boolean; retentionDays: number | null; archiveDir: string | null; batchRows?: number };

/** The periodic spec: at once at start (a fresh database gets its ranges), then every `intervalSeconds`. */
export function eventPartitionsSpec(intervalSeconds: number): PeriodicSpec {
  return { name: 'event_partitions', intervalMs: intervalSeconds * 1000, firstDelayMs: 0, lease: { ttlSeconds: LEASE_TTL_SECONDS } };
}

/**
 * `width`: of the ranges made; `remade`: empty ranges of another width dropped to be made again at
 * it; `unstartedFires`: trigger fires that started nothing, older than the retention, deleted (a
 * started one goes with its range).
 */
export type PartitionReport = { width: number; made: EventRange[]; remade: EventRange[]; dropped: { range: EventRange; executions: number; archive: string | null }[]; unstartedFires: number; skipped?: true };

/**
 * A server's partition work (what `every` runs): its first run makes ranges at the server's own
 * width (remaking the empty ones ahead when they differ); later runs follow the newest range's
 * width, so that of servers set to different widths the one whose first run came last decides,
 * once, instead of each remaking the ranges ahead at its own every run. A width followed that is
 * not the server's own is logged once per width.
 */
export function eventPartitionKeeper(deps: { db: Db; log: Logger }, s: PartitionSettings): () => Promise<PartitionReport> {
  let applied = false;
  let followed: number | null = null;
  return async () => {
    const report = await keepEventPartitions(deps, { ...s, followWidth: applied });
    if (report.skipped) return report;
    applied = true;
    const other = report.width === s.width ? null : report.width;
    if (other !== null && other !== followed) {
      deps.log.warn({ width: other, configured: s.width }, `the event log's ranges are ${other} executions wide (set by a server whose first run came later): this server makes them so, not at SVC_EVENT_PARTITION_EXECUTIONS=${s.width}`);
    }
    followed = other;
    return report;
  };
}

/**
 * One run: makes the ranges ahead, then drops (archiving first) the expired ones, and the fires
 * that started nothing as old. Skipped (`skipped`, nothing done) while another run goes on: the
 * lease that elects a server for this work lasts LEASE_TTL_SECONDS, and archiving a range of a
 * million executions can outlast it; a second run would then write the same archive file at once
 * (and read rows the first had deleted) or drop what the first is dropping.
 */
export async function keepEventPartitions(deps: { db: Db; log: Logger }, s: PartitionSettings): Promise<PartitionReport> {
  const report = await whilePartitionRunHeld(deps.db, () => keepEventPartitionsHeld(deps, s));
  if (report) return report;
  deps.log.info('event log partition work skipped: another run of it is still going on');
  return { width: s.width, made: [], remade: [], dropped: [], unstartedFires: 0, skipped: true };
}

async function keepEventPartitionsHeld(deps: { db: Db; log: Logger }, s: PartitionSettings): Promise<PartitionReport> {
  const { width, made, remade } = await makeAhead(deps.db, s.width, s.followWidth ?? false);
  if (remade.length) deps.log.info({ ranges: remade, width }, 'empty event log ranges of another width dropped, to be made again');
  if (made.length) deps.log.info({ ranges: made }, 'event log ranges made ahead');
  const dropped: PartitionReport['dropped'] = [];
  let unstartedFires = 0;
  if (s.retentionDays !== null) {
    // The last range holds the newest ids (or is ahead): never a candidate. Oldest first; a range
    // held back by an execution that has not finished (an approval waiting for months) is passed
    // over, not waited for; one that is open, or has executions finished too recently, ends the
    // look (the later ranges are newer still).
    const candidates = (await eventRanges(deps.db)).slice(0, -1);
    const gone = new Set<number>();
    for (const r of candidates) {
      if (gone.has(r.lo)) continue;
      const verdict = await rangeVerdict(deps.db, r, s.retentionDays, RANGE_HELD_MS);
      if (verdict === 'open' || verdict === 'recent') break;
      // A range whose children are in other ranges waits for theirs to go first; but ranges that
      // hold each other's children (a parent and grandchild in one, the child in another: ids come
      // in blocks per server) would wait for each other for ever: all expired, they go together.
      const group = verdict === 'expired' ? [r] : verdict === 'parent' ? await linkedRanges(deps.db, r, candidates, s.retentionDays) : null;
      if (!group) {
        deps.log.debug({ range: r, verdict }, 'event log range kept past its retention');
        continue;
      }
      const archives: (string | null)[] = [];
      for (const g of group) archives.push(s.archiveDir === null ? null : await archiveRange(deps.db, g, s.archiveDir));
      const executions = await dropRanges(deps.db, group, s.batchRows ?? DROP_BATCH_ROWS);
      group.forEach((g, i) => {
        gone.add(g.lo);
        dropped.push({ range: g, executions: executions[i], archive: archives[i] });
        deps.log.info({ range: g, executions: executions[i], archive: archives[i] }, 'event log range dropped by retention');
      });
    }
    const dropFires = (days: number) => dropUnstartedFires(deps.db, days, s.batchRows ?? DROP_BATCH_ROWS);
    for (let n = await dropFires(s.retentionDays); n > 0; n = await dropFires(s.retentionDays)) unstartedFires += n;
    if (unstartedFires) deps.log.info({ fires: unstartedFires }, 'trigger fires that started nothing dropped by retention');
  }
  return { width, made, remade, dropped, unstartedFires };
}

/**
 * Makes every range from the end of the last one until RANGES_AHEAD ranges lie past the last
 * execution id, `asked` wide (with `follow`, as wide as the last range). When the last range is
 * empty and not that wide (the migration's ranges of a million ids on a fresh database, or the
 * setting changed), the empty ranges at the end that are not are dropped first and made again,
 * in one transaction holding the log.
 */
async function makeAhead(db: Db, asked: number, follow: boolean): Promise<Pick<PartitionReport, 'width' | 'made' | 'remade'>> {
  const ranges = await eventRanges(db);
  const last = ranges.at(-1);
  const width = follow && last ? last.hi - last.lo : asked;
  const misfit = (r: EventRange) => r.hi - r.lo !== width;
  // Checked before the log is held: a range in use is never held for.
  if (!last || !misfit(last) || !(await eventRangeEmpty(db, last))) return { width, made: await makeFrom(db, last?.hi ?? 0, width, await lastExecutionId(db)), remade: [] };
  return withEventLogHeld(db, async (q) => {
    const remade: EventRange[] = [];
    for (const r of ranges.toReversed()) {
      if (!misfit(r) || !(await eventRangeEmpty(q, r))) break;
      await dropHeldEventRange(q, r);
      remade.unshift(r);
    }
    const lastId = await lastExecutionId(q);
    if (!remade.length) return { width, made: await makeFrom(q, last.hi, width, lastId), remade };
    // From the end of the range kept, or where the dropped ones began; past ids with no event.
    const base = ranges.at(-1 - remade.length)?.hi ?? remade[0].lo;
    const needed = Math.min((await lowestDefaultExecutionId(q)) ?? Infinity, lastId + 1);
    return { width, made: await makeFrom(q, base + Math.max(0, Math.floor((needed - base) / width)) * width, width, lastId), remade };
  });
}

/** Makes every range from `lo` on until RANGES_AHEAD ranges lie past `last` (the last execution id handed out). */
async function makeFrom(q: Queryable, lo: number, width: number, last: number): Promise<EventRange[]> {
  const made: EventRange[] = [];
  while (lo <= last + RANGES_AHEAD * width) {
    const r = { lo, hi: lo + width };
    if (await createEventRange(q, r)) made.push(r);
    lo = r.hi;
  }
  return made;
}

/**
 * Range `r` (verdict `parent`) and the ranges holding its children, theirs, and so on, oldest
 * first, when every one of them may go but for those children (verdict `expired` or `parent`);
 * null when one may not (a child in the newest range or the default partition, or a range of
 * recent or unfinished executions): `r` then waits.
 */
async function linkedRanges(db: Db, r: EventRange, candidates: readonly EventRange[], days: number): Promise<EventRange[] | null> {
  const group = [r];
  for (let i = 0; i < group.length; i++) {
    const children = await childRanges(db, group[i], candidates);
    if (!children) return null;
    for (const c of children) {
      if (group.some((g) => g.lo === c.lo)) continue;
      const verdict = await rangeVerdict(db, c, days, RANGE_HELD_MS);
      if (verdict !== 'expired' && verdict !== 'parent') return null;
      group.push(c);
    }
  }
  return group.sort((a, b) => a.lo - b.lo);
}

/**
 * The ranges' rows in short transactions (the final status of an MCP server's last lifecycle
 * execution kept on its row, batch requests, trigger fires, start idempotency keys,
 * commands, then executions, children before parents, across the ranges until none is left),
 * then their event partitions: a run cut off midway leaves only finished executions' rows, which
 * the next run deletes (the ranges are still expired). Returns how many executions went, per range.
 */
async function dropRanges(db: Db, group: readonly EventRange[], batchRows: number): Promise<number[]> {
  for (const r of group) {
    await dropRangeRows(db, r, 'resources', batchRows);
    await dropRangeRows(db, r, 'batches', batchRows);
    while ((await dropRangeRows(db, r, 'fires', batchRows)) > 0);
    while ((await dropRangeRows(db, r, 'keys', batchRows)) > 0);
    while ((await dropRangeRows(db, r, 'commands', batchRows)) > 0);
  }
  const executions = group.map(() => 0);
  // A parent in one range goes only after its child in another: passes until one deletes nothing.
  for (let more = true; more; ) {
    more = false;
    for (const [i, r] of group.entries()) {
      for (let n = await dropRangeRows(db, r, 'executions', batchRows); n > 0; n = await dropRangeRows(db, r, 'executions', batchRows)) {
        executions[i] += n;
        more = true;
      }
    }
  }
  // An execution something still points at stays, and so do its events: the next run tries again.
  for (const r of group) {
    if (await rangeHoldsExecutions(db, r)) throw new Error(`range [${r.lo}, ${r.hi}) still holds executions that could not be deleted; its events are kept`);
  }
  for (const r of group) await dropEventPartition(db, r);
  return executions;
}

/**
 * Writes range `r` to its file under `dir`, read page by page; a file already there is whole (it
 * is renamed into place) and, when it holds every execution the range still has (archiveMissing),
 * was written by a run cut off before the drop finished, whose deletes may have begun: it is kept
 * as it is. One that does not (another database's, or one from before a restore) fails the run
 * before anything is deleted: overwritten it would be lost, kept the range's rows would be.
 * Returns its path.
 */
async function archiveRange(db: Db, r: EventRange, dir: string): Promise<string> {
  const path = archiveFileOf(dir, r);
  if (await access(path).then(() => true, () => false)) {
    let after = r.lo - 1;
    const missing = await archiveMissing(path, async () => {
      const page = await rangeExecutions(db, r, after, ARCHIVE_PAGE_ROWS);
      after = page.at(-1)?.execution_id ?? after;
      return page;
    });
    if (missing) {
      throw new Error(
        `${path} is already there but does not hold execution ${missing.execution_id} as this database has it (an archive of another database in the same SVC_ARCHIVE_DIR, or one written before a restore): range [${r.lo}, ${r.hi}) is kept, and retention stops, until that file is moved away`,
      );
    }
    return path;
  }
  let afterExecution = r.lo - 1;
  let after = { execution: r.lo - 1, event: 0 };
  return (
    await writeArchive(dir, r, {
      async nextExecutions(): Promise<ArchivedExecution[]> {
        const page = await rangeExecutions(db, r, afterExecution, ARCHIVE_PAGE_ROWS);
        const last = page.at(-1);
        if (last) afterExecution = last.execution_id;
        return page;
      },
      async nextEvents(): Promise<ArchivedEvent[]> {
        const page = await rangeEvents(db, r, after, ARCHIVE_PAGE_ROWS);
        const last = page.at(-1);
        if (last) after = { execution: last.execution_id, event: last.event_id };
        return page;
      },
    })
  ).path;
}
