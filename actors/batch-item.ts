import * as v from 'valibot';
import type { RoutedEvent } from '../src/protocol.ts';
import { ownKeysRecord } from '../src/own-keys-record.ts';

/**
 * One event of a stored batch as the processor reads it back. The API validated it in full on
 * the way in (src/api/batch.ts); this checks the shape routing relies on.
 */
export const storedBatchItem = v.object({
  event_type: v.string(),
  command_id: v.optional(v.nullable(v.number())),
  attempt: v.optional(v.nullable(v.number())),
  step: v.optional(v.nullable(v.string())),
  context: v.optional(v.nullable(ownKeysRecord(v.string(), v.unknown()))),
  result: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
});

/**
 * The event to route for item `item` of a batch: addressed to the batch's execution, from its
 * worker, its context naming the id the item got at acceptance (`batch_event_id`), so each
 * routed event can be traced to the batch item it came from.
 */
export function batchItemEvent(batch: { execution_id: number; worker_id: string | null }, item: unknown, batchEventId: number): RoutedEvent {
  const e = v.parse(storedBatchItem, item);
  return {
    execution_id: batch.execution_id,
    worker_id: batch.worker_id,
    event_type: e.event_type,
    command_id: e.command_id ?? null,
    attempt: e.attempt ?? null,
    step: e.step ?? null,
    context: { ...e.context, batch_event_id: batchEventId },
    result: e.result ?? null,
    error: e.error ?? null,
  };
}
