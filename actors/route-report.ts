import { COMMAND_RULES } from '../machines/command-rules.ts';
import { CODE, type ReportRefusalCode } from '../machines/error-codes.ts';
import { EVENT, WORKER_EVENT_TYPES } from '../machines/event-types.ts';
import { reportVerdict } from '../machines/report-verdict.ts';
import { withoutRecordMarks } from './to-machine-event.ts';
import { isLiveExecutionStatus } from '../machines/statuses.ts';
import type { PendingCommand, SignalSent } from '../machines/execution/types.ts';
import type { CommandRow, CommandStatus } from '../src/db/command.repo.ts';
import type { ExecutionStatus } from '../src/db/execution.repo.ts';
import type { UnitCommandUpdate } from '../src/db/unit-write.ts';
import { asObject } from '../src/objects.ts';
import type { EventInput, EventResult, RoutedEvent } from '../src/protocol.ts';

/** What routing a report needs of the fold it goes into (actors/fold.ts, which also routes batch items with it). */
export interface ReportFold {
  apply(executionId: number, event: EventInput, command?: CommandRow, at?: number): number;
  updateCommand(update: UnitCommandUpdate): void;
  commandStatus(cmd: CommandRow): CommandStatus;
  /** Whether a report folded here moved (or kept) this command already. */
  commandReported(commandId: number): boolean;
  statusOf(executionId: number): ExecutionStatus | undefined;
  pendingOf(executionId: number, seq: number): PendingCommand | undefined;
  waitsForSignal(executionId: number, name: string): boolean;
  /** Whether a held execution still waits for its admission (flow control), paused or not. */
  awaitsAdmission(executionId: number): boolean;
  /** The signals a held execution keeps for steps that wait later (`buffer: true`), all names. */
  keptSignals(executionId: number): readonly SignalSent[];
  /** A report about this command was refused (the unit reads its row afresh when memory gave it: see execution-unit.ts). */
  refused(commandId: number): void;
}

/**
 * Signals one execution may keep for steps that wait later (`buffer: true`), all names together:
 * each is in its log and its state until a step takes it, so a client that sends them without end
 * would grow both without bound. One more is refused (signal_buffer_full) and stores nothing.
 */
export const MAX_KEPT_SIGNALS = 100;

/**
 * Bytes the payloads of the signals one execution keeps may come to together, each as its JSON
 * text: 1 MiB. They are part of its snapshot, written and read whole with each of its events, so
 * MAX_KEPT_SIGNALS bodies of 8 MiB would make it unwritable (a jsonb value holds 1 GB) or exhaust
 * memory. A signal is a decision, not a document: 100 kept ones may still average 10 KiB.
 */
export const MAX_KEPT_SIGNAL_BYTES = 1024 * 1024;

/** What routing made of an event, and whether it was taken (not refused, not late): it may move its execution. */
export type Routed = { result: EventResult; accepted: boolean };

/**
 * Folds one reported (or engine, operator) event into `fold` with the routing's verdicts: the
 * command machine's (fencing, late reports), and whether a wake-up or pause still applies. The
 * result says the id it got, or why it was not routed.
 *
 * `at`: the id reserved for it (a batch item, src/db/batch-accept.repo.ts). Exactly one record
 * is then written there, whatever the verdict: the event, or a `command.refused` record naming
 * why, so the log keeps no gap. A claim recorded with it (`command.claimed`) goes after the ids
 * the log held, as do the effects of folding it.
 */
export function routeReport(fold: ReportFold, commands: ReadonlyMap<number, CommandRow>, ev: RoutedEvent, at?: number): Routed {
  const refuse = (error: ReportRefusalCode, detail: string, cmd?: CommandRow): Routed => {
    if (cmd) fold.refused(cmd.command_id);
    if (at !== undefined || ((error === 'stale_claim' || error === 'not_holder') && cmd)) {
      // Recorded as a refusal (the log shows every attempt that ran, a superseded one's named by
      // its attempt or by its worker alone, and a batch item its reserved id), never as the event
      // it reported: a command completes once in the log. It folds into nothing.
      fold.apply(
        ev.execution_id,
        {
          event_type: EVENT.commandRefused,
          step: cmd?.step ?? ev.step ?? null,
          command_id: cmd?.command_id ?? null,
          worker_id: ev.worker_id,
          context: { ...asObject(ev.context), reported: ev.event_type, refused: error, detail, ...(cmd ? { seq: cmd.seq, attempt: ev.attempt ?? null, command_attempt: cmd.attempt } : { command_id: ev.command_id ?? null }) },
          result: ev.result,
          error: ev.error,
        },
        undefined,
        at,
      );
    }
    return { result: { event_id: null, error, detail }, accepted: false };
  };
  const moot = mootControl(fold, ev);
  // Decided against the state it was read with (a wait another event ended first, a resume of a
  // running execution): not appended, so the log holds each wake-up, signal and pause once.
  if (moot) return refuse(CODE.not_waiting, moot);
  // Decided, as the above, against the state the write is guarded on: two signals racing for the
  // last place (or bytes) cannot both take it (the second is routed again from a fresh read, and refused).
  const full = ev.event_type === EVENT.signalReceived && asObject(ev.context).seq === null ? bufferFull(fold.keptSignals(ev.execution_id), ev) : undefined;
  if (full) return refuse(CODE.signal_buffer_full, full);
  if (!ev.command_id) {
    // What a worker reports is about a command: one naming none was stored as it came, folded
    // into nothing, and the log showed a step failed or completed that no command of it did.
    if ((WORKER_EVENT_TYPES as readonly string[]).includes(ev.event_type)) {
      return refuse(CODE.unknown_command, `${ev.event_type} is a report about a command: it names none (command_id)`);
    }
    return { result: { event_id: fold.apply(ev.execution_id, ev, undefined, at) }, accepted: true };
  }
  const cmd = commands.get(ev.command_id);
  if (!cmd || cmd.execution_id !== ev.execution_id) return refuse(CODE.unknown_command, `command ${ev.command_id} does not belong to execution ${ev.execution_id}`);
  const current = fold.commandStatus(cmd);
  const verdict = reportVerdict({ ...cmd, status: current }, ev.event_type, { attempt: ev.attempt, workerId: ev.worker_id });
  if (verdict.kind === 'refused') return refuse(verdict.code, verdict.message, cmd);
  const reportId = ev.report_id ?? null;
  // The same report sent again after its answer was lost (the server died after commit, or the
  // answer timed out): what it reported is stored already, once. Read with the command's row,
  // so a sending routed while the first one commits is told so when its write is retried.
  if (reportId !== null && cmd.report_id === reportId) {
    return { result: { event_id: null, error: CODE.already_reported, detail: `report ${reportId} moved command ${cmd.command_id} already; nothing was stored again` }, accepted: false };
  }
  const move = (status: CommandStatus) => fold.updateCommand({ execution_id: cmd.execution_id, command_id: cmd.command_id, status, expected_status: cmd.status, expected_attempt: cmd.attempt, report_id: reportId });
  if (verdict.kind === 'late') {
    // Late report for a finished or cancelled command: kept in the log, folded into nothing. It
    // records its own attempt; the command's may be a later claim's (`command_attempt`). A named
    // report is kept on the command (its status unchanged), so sent again it is not stored twice.
    if (reportId !== null) move(current);
    const context = { ...asObject(ev.context), late: true, seq: cmd.seq, attempt: verdict.attempt, command_attempt: cmd.attempt, command_status: current };
    return { result: { event_id: fold.apply(ev.execution_id, { ...ev, step: cmd.step, context }, undefined, at) }, accepted: false };
  }
  if (current === COMMAND_RULES.claim.to && !fold.commandReported(cmd.command_id) && !reportedInClaim(cmd)) {
    // The claim is recorded in the log with the first report of that claim (no extra commit per
    // claim). A heartbeat leaves the command CLAIMED, so the status alone does not say whether
    // one came already: a report written in this claim moved heartbeat_at past claimed_at.
    fold.apply(ev.execution_id, {
      event_type: EVENT.commandClaimed,
      step: cmd.step,
      command_id: cmd.command_id,
      worker_id: cmd.worker_id,
      context: { seq: cmd.seq, attempt: cmd.attempt, worker_id: cmd.worker_id, claimed_at: cmd.claimed_at?.toISOString() ?? null },
    });
  }
  move(verdict.status);
  // Under the step the command was issued for: a report naming another (a batch item's `step`)
  // left the command's step without its run in the log. Folded, so without the marks of a
  // report kept only for the record (a worker's own `late: true` left the step unended).
  return { result: { event_id: fold.apply(ev.execution_id, { ...ev, step: cmd.step, context: withoutRecordMarks(ev.context) }, cmd, at) }, accepted: true };
}

/**
 * Whether a report of the command's current claim was written already: a claim sets claimed_at
 * and heartbeat_at to the same instant, and each report's write moves heartbeat_at on
 * (src/db/unit-write.ts; a row held in memory likewise, actors/route-events.ts movedCommands).
 */
function reportedInClaim(cmd: CommandRow): boolean {
  return cmd.claimed_at !== null && cmd.heartbeat_at !== null && cmd.heartbeat_at.getTime() !== cmd.claimed_at.getTime();
}

const KEPT_BYTES_TEXT = `${MAX_KEPT_SIGNAL_BYTES} bytes (${MAX_KEPT_SIGNAL_BYTES / (1024 * 1024)} MiB)`;

/** Why signal `ev` cannot be kept beside `kept` (MAX_KEPT_SIGNALS, MAX_KEPT_SIGNAL_BYTES), or undefined when it can. */
function bufferFull(kept: readonly SignalSent[], ev: RoutedEvent): string | undefined {
  if (kept.length >= MAX_KEPT_SIGNALS) return `execution ${ev.execution_id} keeps ${MAX_KEPT_SIGNALS} signals no step has taken yet, the most it may: nothing was stored`;
  const bytes = jsonBytes(ev.result ?? null);
  // Over the bound alone: no step taking a kept one makes room; a step waiting for it takes it.
  if (bytes > MAX_KEPT_SIGNAL_BYTES) return `the signal's payload is ${bytes} bytes as JSON, more than the ${KEPT_BYTES_TEXT} the signals an execution keeps may come to together: it is taken only by a step waiting for it; nothing was stored`;
  const keptBytes = kept.reduce((n, s) => n + keptPayloadBytes(s), 0);
  if (keptBytes + bytes <= MAX_KEPT_SIGNAL_BYTES) return undefined;
  return `execution ${ev.execution_id} keeps signals no step has taken yet whose payloads come to ${keptBytes} bytes; with this one's ${bytes} they would be over ${KEPT_BYTES_TEXT}, the most they may: nothing was stored`;
}

/** The size of a kept signal's payload, remembered: the same objects are kept from one snapshot to the next. */
const keptBytesOf = new WeakMap<SignalSent, number>();
function keptPayloadBytes(s: SignalSent): number {
  let n = keptBytesOf.get(s);
  if (n === undefined) keptBytesOf.set(s, (n = jsonBytes(s.payload ?? null)));
  return n;
}
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? 'null');

const WAIT_ENDING: ReadonlySet<string> = new Set([EVENT.timerFired, EVENT.waitTimedOut, EVENT.signalReceived]);

/**
 * Why an engine or operator event no longer applies to its execution as now held, or undefined
 * when it does: a timer, timeout or signal for a wait that is over, a pause of a paused (or
 * ended) execution, a resume of one not paused, a cancel of one that ended.
 */
function mootControl(fold: ReportFold, ev: RoutedEvent): string | undefined {
  const status = fold.statusOf(ev.execution_id);
  // A queued one is paused in its place: the admitter passes it over until its resume.
  if (ev.event_type === EVENT.executionPaused) return status === 'running' || status === 'queued' ? undefined : `execution ${ev.execution_id} is ${status}`;
  if (ev.event_type === EVENT.executionResumed) return status === 'paused' ? undefined : `execution ${ev.execution_id} is ${status}, not paused`;
  // Admitted twice (an admission routed again after its server stopped): the second is moot. One
  // paused after the admitter's statement read it queued has its slot already: it takes it, and
  // its entry step's commands are held until the resume.
  if (ev.event_type === EVENT.executionAdmitted) return status === 'queued' || (status === 'paused' && fold.awaitsAdmission(ev.execution_id)) ? undefined : `execution ${ev.execution_id} is ${status}, not queued`;
  // A cancel that lost the race with the execution's end (its caller read it live): the end stands, one terminal event.
  if (ev.event_type === EVENT.executionCancelled) return status !== undefined && isLiveExecutionStatus(status) ? undefined : `execution ${ev.execution_id} is ${status}`;
  if (!WAIT_ENDING.has(ev.event_type)) return undefined;
  // A wake-up the timekeeper read as due before a pause committed: a paused execution's due waits
  // wait for the resume, so it is moot now; the wait's row stays and fires after the resume.
  if (ev.event_type !== EVENT.signalReceived && status === 'paused') return `execution ${ev.execution_id} is paused: its due waits fire after the resume`;
  const seq = asObject(ev.context).seq;
  // A signal without seq is kept for a step that waits later: the machine decides (`bufferable`).
  // Not once a step waits for it (it began after the sender read the execution): kept beside that
  // wait, which takes kept signals only when it begins, it would never be taken; the sender aims
  // it again at the waiting step (src/waits/signal-execution.ts).
  if (ev.event_type === EVENT.signalReceived && seq === null) {
    if (status === undefined || !isLiveExecutionStatus(status)) return `execution ${ev.execution_id} is ${status}`;
    const name = asObject(ev.context).signal;
    return typeof name === 'string' && fold.waitsForSignal(ev.execution_id, name) ? `a step of execution ${ev.execution_id} waits for signal '${name}' now` : undefined;
  }
  return typeof seq === 'number' && fold.pendingOf(ev.execution_id, seq)?.kind === 'wait' ? undefined : `execution ${ev.execution_id} no longer waits under seq ${String(seq)}`;
}
