import type { EngineDeps } from '../../actors/engine-deps.ts';
import { GroupCommit } from '../../actors/group-commit.ts';
import { StartPreludeCache } from '../../actors/start-prelude-cache.ts';
import { fireGroups, type Fire, type FireGroup, type FireResult, type Inactive, type TriggerRef } from './fire-trigger.ts';

// Webhook fires in group commit: deliveries that arrive while a trigger's fires are being written
// go together in its next transaction. Each fire moves its trigger's row (its counts), so one
// transaction per delivery made every delivery of a busy trigger wait in PostgreSQL's lock queue
// for the one before (measured: ~8 backends waiting at 200 deliveries/s); here they take turns in
// memory and share the wait.

/** Transactions of fires written at once (each holds the triggers it fires). */
export const MAX_WEBHOOK_BATCHES_IN_FLIGHT = 4;
/** Fires one transaction takes at most. */
export const MAX_WEBHOOK_FIRES_PER_TRANSACTION = 100;

/** `catalogId`: the trigger's version the fire was checked and rendered against. */
type Item = { trigger: TriggerRef; fire: Fire; catalogId: number };
/** What came of a delivery's fire: its result, or nothing written because its trigger was paused, removed or changed by a new version since the delivery began. */
export type WebhookFireResult = FireResult | { inactive: Inactive };
const triggerKey = (t: TriggerRef) => `${t.path}\n${t.name}`;

/** Writes webhook fires exactly once (fireGroups), batching those that arrive together. */
export class WebhookFires {
  readonly #group: GroupCommit<Item, WebhookFireResult>;

  constructor(deps: EngineDeps) {
    // Catalog heads and execution ids from memory while deliveries keep coming (the write checks a head).
    const prelude = new StartPreludeCache();
    this.#group = new GroupCommit<Item, WebhookFireResult>({
      maxInFlight: MAX_WEBHOOK_BATCHES_IN_FLIGHT,
      weight: () => 1,
      maxWeight: MAX_WEBHOOK_FIRES_PER_TRANSACTION,
      // A trigger's fires are never in two transactions at once: they would wait for each other on its row.
      key: (item) => triggerKey(item.trigger),
      run: (items) => fireBatch(deps, items, prelude),
    });
  }

  /** Makes `fire` of `trigger` if it is active and still of version `catalogId` at the transaction: what it started, or the first result of its fire key (`duplicate`). */
  fire(trigger: TriggerRef, fire: Fire, catalogId: number): Promise<WebhookFireResult> {
    return this.#group.submit({ trigger, fire, catalogId });
  }
}

/** One transaction for a batch: a group per trigger (fireGroups answers a fire key twice in a group as a duplicate of the first). */
async function fireBatch(deps: EngineDeps, items: readonly Item[], prelude: StartPreludeCache): Promise<(WebhookFireResult | Error)[]> {
  const groups: (FireGroup & { fires: Fire[] })[] = [];
  const byTrigger = new Map<string, number>();
  const slot = items.map((item) => {
    const k = `${triggerKey(item.trigger)}\n${item.catalogId}`;
    let g = byTrigger.get(k);
    if (g === undefined) {
      // Live: the trigger's state and version when its body began are checked again in the fire's transaction.
      g = groups.push({ trigger: item.trigger, fires: [], live: 'active', catalogId: item.catalogId }) - 1;
      byTrigger.set(k, g);
    }
    return { g, i: groups[g].fires.push(item.fire) - 1 };
  });
  const results = await fireGroups(deps, groups, { prelude });
  return slot.map(({ g, i }) => {
    const r = results[g];
    if (!r.raced) return r.results[i];
    // Fires without a tick never race a schedule's tick: only their trigger's state stops them.
    return r.inactive ? { inactive: r.inactive } : new Error('a webhook fire raced a schedule tick');
  });
}
