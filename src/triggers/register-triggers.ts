import type { EngineDeps } from '../../actors/engine-deps.ts';
import type { Queryable } from '../db/queryable.ts';
import { lockSchedules, syncTriggers } from '../db/trigger.repo.ts';
import { nextFire } from './cron-schedule.ts';
import { recordPausedQueue } from './scheduler.ts';
import type { TriggerSpec } from './trigger.schema.ts';

/**
 * Makes a newly registered version's `triggers:` the live ones of its path, in the registration's
 * transaction: new schedules fire first at their next time after `now`; triggers the version no
 * longer declares stop. An `overlap: queue` schedule's due times still waiting for its run end
 * with the schedule they fell due by: recorded as skipped, as a pause records them, when the
 * version removes it or changes its cron or timezone (its next fire is then computed afresh).
 * Returns how many were so recorded: counted by the caller once the transaction commits.
 */
export async function registerTriggers(deps: Pick<EngineDeps, 'config'>, q: Queryable, entry: { path: string; catalogId: number; triggers: readonly TriggerSpec[] }, now: Date): Promise<{ skipped: number }> {
  const declared = new Map(entry.triggers.map((t) => [t.name, t]));
  let skipped = 0;
  for (const row of await lockSchedules(q, entry.path)) {
    if (row.paused) continue;
    const next = declared.get(row.name);
    const why =
      next?.kind !== 'schedule'
        ? 'schedule removed by a new version of its playbook'
        : next.cron !== row.spec.cron || next.timezone !== row.spec.timezone
          ? 'schedule changed by a new version of its playbook'
          : undefined;
    if (why) skipped += await recordPausedQueue(q, row, now, deps.config, why);
  }
  await syncTriggers(q, {
    path: entry.path,
    catalogId: entry.catalogId,
    triggers: entry.triggers.map((t) => ({ name: t.name, kind: t.kind, spec: t, firstFire: t.kind === 'schedule' ? nextFire(t.cron, t.timezone, now) : null })),
  });
  return { skipped };
}
