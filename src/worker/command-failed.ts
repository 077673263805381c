import type { TaskOutcomeCode } from '../../machines/error-codes.ts';
import { EVENT } from '../../machines/event-types.ts';
import type { RoutedEvent } from '../protocol.ts';
import { storable } from './storable.ts';

/** The fields every event of one command's report carries: which claim it comes from. */
export type ReportBase = { execution_id: number; command_id: number; attempt: number; worker_id: string; step: string };

// A server's refusal is quoted in the error up to this length.
const FAILURE_MESSAGE_MAX_CHARS = 2_000;

/**
 * The single event that fails a command with `code` when its own events cannot be reported (the
 * runner broke, or the server refused them): small, and storable whatever the message holds.
 */
export function commandFailed(base: ReportBase, code: TaskOutcomeCode, message: string): RoutedEvent {
  const text = message.length > FAILURE_MESSAGE_MAX_CHARS ? `${message.slice(0, FAILURE_MESSAGE_MAX_CHARS)}…` : message;
  return { ...base, event_type: EVENT.commandFailed, error: storable({ message: text, code }).value };
}

/** A server's `detail` (text, or `{code, message}`) as one line of text. */
export function detailText(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (detail && typeof detail === 'object' && 'message' in detail && typeof detail.message === 'string') {
    return 'code' in detail && typeof detail.code === 'string' ? `${detail.code}: ${detail.message}` : detail.message;
  }
  return JSON.stringify(detail) ?? 'no detail';
}
