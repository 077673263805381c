// The help texts of the commands for daily work on executions (`svc list`, `status`, `logs`,
// `cancel`, `pause`, `resume`, `retry`, `signal`), apart from their code so `svc --help` loads
// nothing else.

/** `svc logs` cuts each detail at this many characters (here: the help says it, and loads nothing). */
export const LOG_DETAIL_CHARS = 120;

/** The exit codes of every command here: one list, so a script reads them the same way for each. */
export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3, notFound: 4, conflict: 5, notAllowed: 6, interrupted: 130 } as const;

/** The exit code of a refusal by the server, by its HTTP status (for these commands and `svc limits`). */
export function refusalExitCode(status: number): number {
  if (notServingNow(status)) return EXIT.unreachable;
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  if (status === 401 || status === 403) return EXIT.notAllowed;
  return EXIT.failed;
}

/**
 * Whether an HTTP status says the server cannot serve the request now, whatever it is (502-504:
 * its database away, a gateway without its upstream): exit 3, as unreachable, "try again later".
 */
export function notServingNow(status: number): boolean {
  return status >= 502 && status <= 504;
}

// 1, 2 and 3 mean what they mean for every `svc` client command (runCli); 4 to 6 tell apart the
// refusals a script acts on differently: a wrong id, a wrong moment, a wrong caller.
export const EXECUTION_EXIT_CODES = `exit codes: ${EXIT.ok} done, ${EXIT.failed} request failed (server error, other refusal, unexpected answer),
            ${EXIT.usage} usage error, ${EXIT.unreachable} server unreachable or not serving now (502-504), ${EXIT.notFound} not found (404: no such execution),
            ${EXIT.conflict} conflict (409, or cancel of a finished execution: not running, not paused,
            not finished, no step waits for the signal), ${EXIT.notAllowed} not allowed (401/403: no token,
            or the caller's role or the step's approval roles exclude it), ${EXIT.interrupted} Ctrl-C
            (logs --follow)`;

const COMMON = [
  ['--json', "print the API's answer as JSON on stdout (for programs)"],
  ['--server URL', 'the server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)'],
];

/** The common options, their descriptions from the column where the command's own options' start (16 when it has none). */
function commonOptions(options: string): string {
  const column = Math.max(16, ...options.split('\n').map((line) => /^ {2}-\S.*? {2,}(?=\S)/.exec(line)?.[0].length ?? 0));
  return COMMON.map(([flag, text]) => `  ${flag.padEnd(column - 2)}${text}`).join('\n');
}

/** A command's help: its usage line, its own options, the common ones, then what it does and who may. */
const help = (summary: string, usage: string, options: string, notes: string, role: string) => ({
  summary,
  usage: `${usage}\n\n${options ? `${options}\n` : ''}${commonOptions(options)}\n\n${notes ? `${notes}\n` : ''}SVC_API_TOKEN, when set, is sent as the caller's API token (${role}). See docs/cli.md.\n${EXECUTION_EXIT_CODES}`,
});

/** The commands on executions, each with its one-line summary and help text (first line: the usage line). */
export const EXECUTION_COMMANDS = {
  list: help(
    'list executions, newest first by start time (filters: status, path prefix, time range, parent, trigger, who started it, labels; search)',
    'svc list [--status S] [--path-prefix P] [--since T] [--until T] [--parent ID] [--trigger NAME] [--by WHO] [--search TEXT] [--label K=V]... [--limit N] [--cursor C] [--json] [--server URL]',
    `  --status S       queued, running, paused, completed, failed, cancelled (every status the
                   server knows; queued: waiting for admission, docs/flow-control.md)
  --path-prefix P  playbook paths starting with P (e.g. billing/)
  --since T        started at or after T: an ISO 8601 time (2026-11-01T08:00:00Z, or a date:
                   its UTC midnight), or a duration back from now (90s, 30m, 2h, 1d, 1h30m)
  --until T        started before T (as --since)
  --parent ID      the child executions of execution ID (its playbook tasks)
  --trigger NAME   started by the trigger of this name (schedule, webhook, NATS)
  --by WHO         started by this caller (a token's or the gateway's subject; local without auth)
  --search TEXT    an execution id exactly, or TEXT anywhere in the playbook path (any case)
  --label K=V      started with this label (svc run --label K=V); repeatable: all of them
  --limit N        at most N executions (the server's default 50, at most 500)
  --cursor C       the next page: C is what the line under the table (or next_cursor) says`,
    'Columns: id, playbook path, status, start time (and its age), run time (from its admission when flow control queued it; `queued` and for how long while it waits), progress.',
    'viewer',
  ),
  status: help(
    "show an execution: status, times, result or error, retry links, each step's status and what it waits for",
    'svc status ID [--json] [--server URL]',
    '',
    `The execution (GET /api/executions/{id}), its children (GET /api/executions?parent=ID, the
first 10), its steps (GET /api/executions/{id}/state) and what
each waiting step waits for: a timer's wake-up time, or the signal awaited, its timeout and
approval roles. Exits 0 whatever the execution's status; --json prints GET /api/executions/{id}.`,
    'viewer',
  ),
  logs: help(
    "an execution's event timeline: time since start and since the previous event, each task's result or error",
    'svc logs ID [--follow] [--json] [--server URL]',
    `  --follow, -f  print events as they come until the execution ends (Ctrl-C stops following,
                not the execution); with --json, one event a line (JSON Lines)`,
    `One line per event: its id, the time since the execution started (AT) and since the event
before (GAP), type, step and a detail: a task's result or error (call.done, call.error,
command.completed, command.failed), a step's outcome, a cancel's reason, else the event's
context. Details are cut at ${LOG_DETAIL_CHARS} characters; --json has every event whole.`,
    'viewer',
  ),
  cancel: help(
    'cancel a running or paused execution (and, unless --no-cascade, the executions it started)',
    'svc cancel ID [--reason TEXT] [--cascade|--no-cascade] [--json] [--server URL]',
    `  --reason TEXT  recorded in the execution.cancelled event (default: "cancelled by request")
  --cascade      cancel the executions it started too (the default, said explicitly)
  --no-cascade   leave its child executions running (the server cascades by default)`,
    `A finished execution is left as it is: exit ${EXIT.conflict}, its status printed.`,
    'operator',
  ),
  pause: help(
    'pause a running or queued execution: no new command is issued, running ones finish, due timers wait',
    'svc pause ID [--reason TEXT] [--json] [--server URL]',
    '  --reason TEXT  recorded in the execution.paused event',
    `A queued one (flow control) keeps its place and is not admitted until it is resumed.
409 (exit ${EXIT.conflict}) unless the execution is running or queued.`,
    'operator',
  ),
  resume: help('resume a paused execution', 'svc resume ID [--reason TEXT] [--json] [--server URL]', '  --reason TEXT  recorded in the execution.resumed event', `409 (exit ${EXIT.conflict}) unless the execution is paused.`, 'operator'),
  retry: help(
    'retry a finished execution from a step: a new execution that replays the steps before it',
    'svc retry ID [--from STEP] [--idempotency-key KEY] [--json] [--server URL]',
    `  --from STEP            the first step to run again (default: the step whose failure ended it);
                         the steps that completed before it take their recorded outcomes
                         (step.replayed)
  --idempotency-key KEY  the same key again is answered with the first retry's execution and
                         starts nothing (a retry sent again after a lost answer); without it a key
                         of its own, with which a request that got no answer (or 502-504) goes again`,
    `409 (exit ${EXIT.conflict}) while the execution has not finished.`,
    'operator',
  ),
  signal: help(
    'send a signal to an execution: a step waiting for it (wait: { signal: NAME }) goes on',
    'svc signal ID NAME [--data JSON] [--idempotency-key KEY] [--json] [--server URL]',
    `  --data JSON            the signal's payload, any JSON value (the step reads signal.payload);
                         @FILE reads it from FILE, @- from standard input (off the command line)
  --idempotency-key KEY  the same key again is the same signal, not a second one; without it a
                         key of its own, with which a request that got no answer (or 502-504) goes again`,
    `409 (exit ${EXIT.conflict}) when no step waits for NAME; 403 (exit ${EXIT.notAllowed}) when the step's
approval roles exclude the caller.`,
    'operator; a step with approval roles wants one of them',
  ),
} as const;

export type ExecutionCommandName = keyof typeof EXECUTION_COMMANDS;
