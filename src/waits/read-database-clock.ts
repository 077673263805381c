import { databaseNowMs } from '../db/wait.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import type { WaitClock } from './wait-clock.ts';

/**
 * Reads PostgreSQL's clock into `clock` once, before a server serves or starts its periodic work:
 * the timekeeper's looks read it from then on, and until its first one the times this server
 * records (a report's moments, a fire, a cancel) and the schedules it decides were on its own clock.
 */
export async function readDatabaseClock(db: Queryable, clock: WaitClock): Promise<void> {
  const sentMs = Date.now();
  const databaseMs = await databaseNowMs(db);
  clock.heardDatabase(databaseMs, sentMs, Date.now());
}
