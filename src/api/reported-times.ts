import type { RoutedEvent } from '../protocol.ts';
import { isObject } from '../objects.ts';

/** The oldest a reported moment may be (a day): a larger `ago_ms` is a bug of its sender, clamped. */
const MAX_AGE_MS = 86_400_000;

/**
 * Worker events carry `context.ago_ms`: how long before sending the report each moment was, on
 * the worker's monotonic clock (src/worker/elapsed.ts). Here, at receipt, it becomes `at`: the
 * receive time (`receivedAtMs`: on the database's clock, wait-clock.ts databaseNow) less that age, with
 * `received_at` beside it. So a command's start is the time it started, not the time its report
 * came, and no worker's wall clock orders anything. Other events pass unchanged.
 */
export function stampReportedTimes<E extends Pick<RoutedEvent, 'context'>>(events: readonly E[], receivedAtMs = Date.now()): E[] {
  const receivedAt = new Date(receivedAtMs).toISOString();
  return events.map((e) => {
    const ctx = e.context;
    if (!isObject(ctx) || typeof ctx.ago_ms !== 'number' || !Number.isFinite(ctx.ago_ms)) return e;
    const { ago_ms: ago, ...rest } = ctx;
    const at = new Date(receivedAtMs - Math.min(MAX_AGE_MS, Math.max(0, ago))).toISOString();
    return { ...e, context: { ...rest, at, received_at: receivedAt } };
  });
}


/**
 * `events` without their `context.ago_ms` (where stampReportedTimes reads one): what a report
 * says, apart from when it was sent. A worker writes the ages afresh at each send, so a batch
 * sent again under its Idempotency-Key (after a 503 or a lost answer) is the same batch.
 */
export function withoutReportedAges<E extends Pick<RoutedEvent, 'context'>>(events: readonly E[]): E[] {
  return events.map((e) => {
    const ctx = e.context;
    if (!isObject(ctx) || typeof ctx.ago_ms !== 'number' || !Number.isFinite(ctx.ago_ms)) return e;
    const { ago_ms: _ago, ...rest } = ctx;
    return { ...e, context: rest };
  });
}
