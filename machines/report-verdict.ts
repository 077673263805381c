import { COMMAND_RULES } from './command-rules.ts';
import { COMMAND_STATUSES, isHolder, type CommandEvent, type CommandStatus, type Reporter } from './command.machine.ts';
import type { ReportRefusalCode } from './error-codes.ts';
import { EVENT } from './event-types.ts';

export type ReportVerdict =
  | { kind: 'accept'; status: CommandStatus }
  /**
   * The command is already over: the report is kept in the log, under the attempt it was sent
   * from (null when it named none), and moves nothing.
   */
  | { kind: 'late'; attempt: number | null }
  | { kind: 'refused'; code: Exclude<ReportRefusalCode, 'unknown_command'>; message: string };

export type CommandState = { command_id: number; status: CommandStatus; attempt: number; worker_id: string | null };

function commandEventOf(eventType: string, r: Reporter): CommandEvent {
  const reporter = { attempt: r.attempt ?? null, workerId: r.workerId ?? null };
  if (eventType === EVENT.commandCompleted) return { type: 'complete', ...reporter };
  if (eventType === EVENT.commandFailed) return { type: 'fail', ...reporter };
  if (eventType === EVENT.commandHeartbeat) return { type: 'heartbeat', ...reporter };
  return { type: 'start', ...reporter };
}

/** The status the command machine moves to on `event`, or undefined when no transition is enabled. */
function next(status: CommandStatus, event: CommandEvent, context: { attempt: number; workerId: string | null }): CommandStatus | undefined {
  for (const arc of COMMAND_RULES.arcs(status, event.type)) {
    if (arc.guard === 'holder' && !('attempt' in event || 'workerId' in event ? isHolder(context, event) : false)) continue;
    return arc.target;
  }
  return undefined;
}

// The one guard a report's arcs may carry (checked once: a new guard needs its evaluation here).
for (const status of COMMAND_STATUSES) {
  for (const type of ['start', 'heartbeat', 'complete', 'fail']) {
    for (const arc of COMMAND_RULES.arcs(status, type)) if (arc.guard !== undefined && arc.guard !== 'holder') throw new Error(`report-verdict: unknown guard ${arc.guard}`);
  }
}

/**
 * What a worker's report about a command may do, decided by the command machine: move it
 * (accept, with the status it moves to), nothing (late: the command is over), or be refused
 * because it does not come from the current claim.
 */
export function reportVerdict(cmd: CommandState, eventType: string, reporter: Reporter): ReportVerdict {
  const id = cmd.command_id;
  const stale = (): ReportVerdict => ({ kind: 'refused', code: 'stale_claim', message: `command ${id} was claimed again (attempt ${cmd.attempt}); this report is from attempt ${reporter.attempt}` });
  const notHolder = (): ReportVerdict => ({ kind: 'refused', code: 'not_holder', message: `command ${id} is held by another worker` });
  // An arc of the machine decides; without one, what the command's status says of the refusal.
  const status = next(cmd.status, commandEventOf(eventType, reporter), { attempt: cmd.attempt, workerId: cmd.worker_id });
  if (status !== undefined) return { kind: 'accept', status };
  if (COMMAND_RULES.final.includes(cmd.status)) {
    // A claim taken over (its worker went quiet) and finished by the new holder: the old one's
    // report is fenced off like any stale claim's, not stored as a late one of the finished claim.
    if (reporter.attempt != null && reporter.attempt !== cmd.attempt) return stale();
    // The same for a report naming only its worker: while the command runs another worker's is
    // refused (not_holder), so once it is over that report must not pass as a late one either.
    if (reporter.workerId != null && cmd.worker_id != null && reporter.workerId !== cmd.worker_id) return notHolder();
    return { kind: 'late', attempt: reporter.attempt ?? null };
  }
  // Withdrawn by its execution's pause before a claim took it: no claim holds it either.
  if (COMMAND_RULES.claim.from.includes(cmd.status) || cmd.status === COMMAND_RULES.pause.to) return { kind: 'refused', code: 'not_claimed', message: `command ${id} is not claimed; claim it before reporting` };
  if (reporter.attempt != null && reporter.attempt !== cmd.attempt) return stale();
  if (reporter.attempt == null && reporter.workerId == null) {
    return { kind: 'refused', code: 'not_holder', message: `a report about command ${id} must name its claim: worker_id or attempt` };
  }
  return notHolder();
}
