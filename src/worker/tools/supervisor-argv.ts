import { accessSync, constants } from 'node:fs';

/** What a deadline's watchdog writes on the program's fd 4 (the status pipe) before it signals the group. */
export const WATCHDOG_NOTE = 'deadline';

// Run as `sh -c SUPERVISOR svc-shell <shield> <deadline> <sleep> <grace> <argv…>` in a new
// session (spawn detached), so the program and everything it starts share one process group that
// nothing else is in. Before it execs the program, the supervisor leaves in the group:
// - a watcher, reading a pipe (fd 3) whose other end only the worker holds: the kernel closes that
//   end when the worker dies in any way (even SIGKILL; Node has no PR_SET_PDEATHSIG), and the
//   watcher then kills the whole group. The worker closes it too when the program ends, so nothing
//   it left running in the background outlives it.
// - with a <deadline> (seconds), a watchdog: it sleeps that long, notes WATCHDOG_NOTE on fd 4,
//   sends the group SIGTERM and, <grace> seconds later, SIGKILL. The worker's own timer stops a
//   task that runs too long, but not while the worker stands still (SIGSTOP, a frozen event loop);
//   the watchdog is no part of the worker, so the task's time limit holds all the same. The note
//   tells the worker, once it runs again, that the task ended at its deadline (not on its own). It
//   dies with the group: the watcher kills it when the program ends or the worker dies.
// Both ignore SIGTERM, so that a stop's grace period does not end their watch, and SIGPIPE (the
// worker may have let go of fd 4); they read nothing else and write nowhere else, so they hold no
// output pipe open. Exec keeps the program at the spawned pid: its exit code or signal is the
// program's own. With <shield> `1` the program starts with SIGTERM ignored (bwrap, whose death
// tears its sandbox down at once: the processes inside reset it and get the SIGTERM and grace
// period themselves). Every value is a positional parameter, never part of the script's text.
const SUPERVISOR = [
  '{ trap "" TERM INT HUP PIPE; read -r _ <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 4>&- 5<&- 6<&- 7<&- 8<&- 9<&- &',
  `if [ -n "$2" ]; then { trap "" TERM INT HUP PIPE; if "$3" "$2"; then echo ${WATCHDOG_NOTE} >&4; kill -TERM 0; "$3" "$4"; kill -KILL 0; fi; } </dev/null >/dev/null 2>&1 3<&- 5<&- 6<&- 7<&- 8<&- 9<&- & fi`,
  '[ "$1" = 1 ] && trap "" TERM; shift 4; exec "$@" 3<&-',
].join('\n');

// coreutils' sleep, by absolute path: the supervisor runs with the task's environment, whose PATH
// the task may set (from data, maybe).
const SLEEP_PATHS = ['/usr/bin/sleep', '/bin/sleep'];
let sleepPath: string | undefined;

export type SupervisorOptions = {
  /** Start the program with SIGTERM ignored. */
  shieldTerm?: boolean;
  /** The watchdog's deadline, in ms from the start; none: no watchdog. */
  deadlineMs?: number;
  /** How long the watchdog waits between its SIGTERM and its SIGKILL, in ms. */
  graceMs: number;
};

/**
 * The argv that runs `argv` under the group's supervisor (above): the script, then only numbers
 * and the path of sleep. Throws (ENOENT) when a deadline is asked for and sleep is nowhere.
 */
export function supervisorArgv(argv: readonly string[], opts: SupervisorOptions): string[] {
  const deadline = opts.deadlineMs === undefined ? '' : seconds(opts.deadlineMs);
  const sleep = deadline ? findSleep() : '';
  return ['/bin/sh', '-c', SUPERVISOR, 'svc-shell', opts.shieldTerm ? '1' : '0', deadline, sleep, deadline ? seconds(opts.graceMs) : '', ...argv];
}

// A plain decimal (never an exponent, which sleep may not read), to the millisecond, at least 1 ms.
function seconds(ms: number): string {
  return (Math.max(1, Math.ceil(ms)) / 1000).toFixed(3);
}

function findSleep(): string {
  sleepPath ??= SLEEP_PATHS.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (sleepPath) return sleepPath;
  throw Object.assign(new Error(`no sleep program at ${SLEEP_PATHS.join(' or ')} for the task's timeout watchdog`), { code: 'ENOENT' });
}
