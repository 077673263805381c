import { CODE } from '../../machines/error-codes.ts';
import type { RoutedEvent } from '../protocol.ts';

/**
 * The commands whose events a report's answer (`results`, one per event sent, in order) says were
 * not recorded (`event_id` null: stale_claim, unknown_command, ...), each with its reason, once.
 * Not those `already_reported`: a report sent again whose first sending was stored.
 */
export function refusedEventReasons(events: readonly RoutedEvent[], results: unknown): Map<number, string> {
  const refused = new Map<number, string>();
  if (!Array.isArray(results)) return refused;
  for (const [i, r] of results.entries()) {
    const commandId = events[i]?.command_id;
    if (!commandId || refused.has(commandId) || !r || typeof r !== 'object' || !('event_id' in r) || r.event_id !== null) continue;
    const error = 'error' in r && typeof r.error === 'string' ? r.error : 'refused';
    if (error === CODE.already_reported) continue;
    refused.set(commandId, 'detail' in r && typeof r.detail === 'string' ? `${error}: ${r.detail}` : error);
  }
  return refused;
}
