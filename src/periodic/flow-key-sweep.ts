// Idle flow keys are forgotten. A limit's keys are tenants, customers or orders: a row per key
// ever used (core.flow_key) grew with the log. A key that holds nothing, has nothing waiting and
// was not claimed or admitted on for a day goes; the next work on it makes it again, as new (a key
// at rest that long is as a new one: its bucket is full, KEY_ROOM in src/db/command-plans.ts).
import type { Db } from '../db/db.ts';
import { forgetIdleFlowKeys, type FlowKeyName } from '../db/flow.repo.ts';
import type { Logger } from '../log.ts';
import { housekeeping, type PeriodicSpec } from './every.ts';

/** A key idle this long goes; at least the longest rate period (86,400 s), so its bucket is full again. */
export const FLOW_KEY_FORGET_AFTER_S = 24 * 60 * 60;
/** Keys locked and deleted per transaction. */
const FORGET_BATCH_KEYS = 1_000;

export const FLOW_KEY_SWEEP: PeriodicSpec = housekeeping('flow_key_sweep');

/** Forgets the keys idle for over `idleSeconds`, a batch at a time in key order; returns how many went. */
export async function sweepFlowKeys(deps: { db: Db; log: Logger }, idleSeconds = FLOW_KEY_FORGET_AFTER_S): Promise<number> {
  let forgotten = 0;
  for (let after: FlowKeyName | null = null; ; ) {
    const batch = await forgetIdleFlowKeys(deps.db, idleSeconds, FORGET_BATCH_KEYS, after);
    forgotten += batch.forgotten.length;
    if (batch.last === null) break;
    after = batch.last;
  }
  if (forgotten) deps.log.info({ keys: forgotten, idleSeconds }, 'idle flow keys forgotten');
  return forgotten;
}
