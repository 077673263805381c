import type { Queryable } from '../db/queryable.ts';
import { syncTriggers } from '../db/trigger.repo.ts';
import { nextFire } from './cron-schedule.ts';
import type { TriggerSpec } from './trigger.schema.ts';

/**
 * Makes a newly registered version's `triggers:` the live ones of its path, in the registration's
 * transaction: new schedules fire first at their next time after `now`; triggers the version no
 * longer declares stop.
 */
export async function registerTriggers(q: Queryable, entry: { path: string; catalogId: number; triggers: readonly TriggerSpec[] }, now = new Date()): Promise<void> {
  await syncTriggers(q, {
    path: entry.path,
    catalogId: entry.catalogId,
    triggers: entry.triggers.map((t) => ({ name: t.name, kind: t.kind, spec: t, firstFire: t.kind === 'schedule' ? nextFire(t.cron, t.timezone, now) : null })),
  });
}
