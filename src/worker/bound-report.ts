import { BODY_LIMIT_BYTES } from '../body-limit.ts';
import { capText } from '../cap-output.ts';
import { isObject } from '../objects.ts';
import type { RoutedEvent } from '../protocol.ts';
import { ANSWER_MAX_TEXT } from './tools/answer-limit.ts';
import { fail } from './tools/outcome.ts';
import type { TaskOutcome } from './tools/types.ts';

// What wraps a report's events (worker.ts sends it): a UUID, and a claim of at most nine digits.
const ENVELOPE = { report_id: '00000000-0000-0000-0000-000000000000', retry: false, events: [], claim: 999_999_999 };
// What is kept of a cut attempt's error message: enough to say what failed.
const CUT_ERROR_BYTES = 1024;
const MIB = 1024 * 1024;
// An event's `ago_ms` is written when the report is sent (src/worker/elapsed.ts), later than it is
// measured here: room for the digits it may gain meanwhile (a report held while the server is down).
const ELAPSED_SLACK_BYTES = 8;

/** A failed attempt as its `call.attempt` event carries it: its output (capped) and its error. */
export type FailedAttempt = { output: unknown; error: TaskOutcome['error'] };

/** `value`'s size as JSON text in UTF-8, as a report carries it. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** The size of `events` in a report, as JSON, with room for their times to grow until it is sent. */
export function reportBytes(events: RoutedEvent[]): number {
  return jsonBytes(events) + events.length * ELAPSED_SLACK_BYTES;
}

/**
 * The most the events of one report request of worker `workerId` come to as JSON: the server's
 * body limit (8 MiB; it may take more, a remote worker cannot know) less what wraps them. A
 * command's report is held to it, and a batch of reports is packed within it.
 */
export function reportEventsRoom(workerId: string): number {
  return BODY_LIMIT_BYTES - jsonBytes({ worker_id: workerId, ...ENVELOPE });
}

/** A command's report: its events and their size (reportBytes), held to reportEventsRoom. */
export type CommandReport = { events: RoutedEvent[]; bytes: number };

/** The report of one small event (a command failed without its own events), measured. */
export function commandReport(event: RoutedEvent): CommandReport {
  return { events: [event], bytes: reportBytes([event]) };
}

/**
 * How many of `reports`, from the first, go in one request: as many as `room` (reportEventsRoom)
 * holds (the server refuses a larger body whole; past 64 MiB it answers before reading it, and the
 * worker, still writing, saw a broken connection and sent it again), and always the first (it fits
 * alone: boundReport).
 */
export function fittingReports(reports: readonly { bytes: number }[], room: number): number {
  let count = 0;
  for (let bytes = 0; count < reports.length; count++) {
    bytes += reports[count].bytes + 1; // and the comma between two
    if (count > 0 && bytes > room) break;
  }
  return count;
}

type Cut = { bytes: number; order: number; apply: () => number };

/**
 * The events `build` makes, held to `maxBytes` as JSON. Each part of a report has its own cap (an
 * answer's 8 MiB, an attempt's SVC_TASK_OUTPUT_BYTES), but the report is their JSON: escapes (a
 * quote takes 2 bytes, a control character 6), the events around them and up to 20 failed
 * attempts took it past the server's body limit, and the command failed `report_rejected`, its
 * outcome lost. Past the limit, `attempts` (diagnostics) lose their output and most of their
 * error first, the largest first; then the largest task outcomes of `outcomes` become
 * `response_too_large`, as an answer over 8 MiB does (outcomes first when all the attempts
 * together are smaller than the excess: cutting them would not be enough). Both are changed in place; `build` reads
 * them. Measured once when the report fits (the common case).
 */
export function boundReport(outcomes: Record<string, TaskOutcome>, attempts: FailedAttempt[], build: () => RoutedEvent[], maxBytes: number): CommandReport {
  let events = build();
  let bytes = reportBytes(events);
  if (bytes <= maxBytes) return { events, bytes };
  const byLargest = (a: Cut, b: Cut) => b.bytes - a.bytes || b.order - a.order; // a tie: the later one
  const attemptCuts = attempts.map((a, order): Cut => ({ bytes: jsonBytes(a), order, apply: () => cutAttempt(a) })).sort(byLargest);
  const outcomeCuts = Object.keys(outcomes)
    .map((name, order): Cut => ({ bytes: jsonBytes(outcomes[name]), order, apply: () => cutOutcome(outcomes, name) }))
    .sort(byLargest);
  // Attempts that together cannot make room are kept unless cutting the outcomes is not enough.
  const attemptsBytes = attemptCuts.reduce((sum, c) => sum + c.bytes, 0);
  const cuts = attemptsBytes >= bytes - maxBytes ? [...attemptCuts, ...outcomeCuts] : [...outcomeCuts, ...attemptCuts];
  // The savings are estimates (an outcome's error shows in several events): measured again after.
  while (bytes > maxBytes && cuts.length) {
    for (let excess = bytes - maxBytes; excess > 0 && cuts.length; ) excess -= cuts.shift()!.apply();
    events = build();
    bytes = reportBytes(events);
  }
  return { events, bytes };
}

function cutAttempt(a: FailedAttempt): number {
  const before = jsonBytes(a);
  // The shape of an output cut to SVC_TASK_OUTPUT_BYTES (src/cap-output.ts), with nothing of it kept.
  const size = isObject(a.output) && a.output.truncated === true && typeof a.output.bytes === 'number' ? a.output.bytes : jsonBytes(a.output);
  a.output = { truncated: true, bytes: size, preview: '' };
  if (a.error) a.error = { ...a.error, message: capText(a.error.message, CUT_ERROR_BYTES) };
  return before - jsonBytes(a);
}

function cutOutcome(outcomes: Record<string, TaskOutcome>, name: string): number {
  const outcome = outcomes[name];
  const before = jsonBytes(outcome);
  const error = outcome.error;
  const was = error ? ` (its error was ${error.code ? `${error.code}: ` : ''}${capText(error.message, CUT_ERROR_BYTES)})` : '';
  const message = `the task's outcome came to ${(before / MIB).toFixed(1)} MiB as JSON, more than a report carries (${ANSWER_MAX_TEXT} with the rest of its command's report): not stored${was}`;
  outcomes[name] = fail('response_too_large', message);
  // Its error also shows in call.error and command.failed.
  return before - 3 * jsonBytes(outcomes[name]);
}
