import { transition } from 'xstate';
import { commandMachine, TERMINAL_COMMAND_STATUSES, type CommandEvent, type CommandStatus, type Reporter } from './command.machine.ts';

export type ReportVerdict =
  | { kind: 'accept'; status: CommandStatus }
  /** The command is already over: the report is kept in the log and moves nothing. */
  | { kind: 'late' }
  | { kind: 'refused'; code: 'stale_claim' | 'not_holder' | 'not_claimed'; message: string };

export type CommandState = { command_id: number; status: CommandStatus; attempt: number; worker_id: string | null };

function commandEventOf(eventType: string, r: Reporter): CommandEvent {
  const reporter = { attempt: r.attempt ?? null, workerId: r.workerId ?? null };
  if (eventType === 'command.completed') return { type: 'complete', ...reporter };
  if (eventType === 'command.failed') return { type: 'fail', ...reporter };
  if (eventType === 'command.heartbeat') return { type: 'heartbeat', ...reporter };
  return { type: 'start', ...reporter };
}

/**
 * What a worker's report about a command may do, decided by the command machine: move it
 * (accept, with the status it moves to), nothing (late: the command is over), or be refused
 * because it does not come from the current claim.
 */
export function reportVerdict(cmd: CommandState, eventType: string, reporter: Reporter): ReportVerdict {
  if (TERMINAL_COMMAND_STATUSES.includes(cmd.status)) return { kind: 'late' };
  const id = cmd.command_id;
  if (cmd.status === 'PENDING') return { kind: 'refused', code: 'not_claimed', message: `command ${id} is not claimed; claim it before reporting` };
  const snapshot = commandMachine.resolveState({ value: cmd.status, context: { attempt: cmd.attempt, workerId: cmd.worker_id } });
  const event = commandEventOf(eventType, reporter);
  if (!snapshot.can(event)) {
    if (reporter.attempt != null && reporter.attempt !== cmd.attempt) {
      return { kind: 'refused', code: 'stale_claim', message: `command ${id} was claimed again (attempt ${cmd.attempt}); this report is from attempt ${reporter.attempt}` };
    }
    if (reporter.attempt == null && reporter.workerId == null) {
      return { kind: 'refused', code: 'not_holder', message: `a report about command ${id} must name its claim: worker_id or attempt` };
    }
    return { kind: 'refused', code: 'not_holder', message: `command ${id} is held by another worker` };
  }
  const [next] = transition(commandMachine, snapshot, event);
  return { kind: 'accept', status: next.value };
}
