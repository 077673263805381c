import { spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { closeSync } from 'node:fs';
import { stdioPipes, type StdioPipes } from './stdio-pipes.ts';

/** After a stop's SIGTERM, the group gets this long to exit before SIGKILL. */
export const SHELL_KILL_GRACE_MS = 5_000;

// Run as `sh -c SUPERVISOR svc-shell <shield> <argv…>` in a new session (spawn detached), so the
// program and everything it starts share one process group that nothing else is in. Before it
// execs the program, the supervisor leaves a watcher in the group, reading a pipe (fd 3) whose
// other end only the worker holds: the kernel closes that end when the worker dies in any way
// (even SIGKILL; Node has no PR_SET_PDEATHSIG), and the watcher then kills the whole group. The
// worker closes it too when the program ends, so nothing it left running in the background
// outlives it. The watcher ignores SIGTERM so that a stop's grace period does not end its watch;
// it reads nothing else and writes nowhere, so it holds no output pipe open. Exec keeps the
// program at the spawned pid: its exit code or signal is the program's own. With <shield> `1`
// the program starts with SIGTERM ignored (bwrap, whose death tears its sandbox down at once:
// the processes inside reset it and get the stop's SIGTERM and grace period themselves).
const SUPERVISOR =
  '{ trap "" TERM INT HUP; read -r _ <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 4>&- 5<&- 6<&- 7<&- & [ "$1" = 1 ] && trap "" TERM; shift; exec "$@" 3<&-';

export type GroupChild = {
  child: ChildProcess;
  /** The program's stdout and stderr: pipes (stdioPipes). */
  stdout: Readable;
  stderr: Readable;
  /** Once the program exited and its stdout and stderr are closed (spawn's 'close', with pipes of ours). */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** A pipe at the program's fd 4 (STATUS_FD), for notes of a wrapper that closes it before the command. */
  status: Readable;
  /** SIGTERM to the whole group now, SIGKILL after SHELL_KILL_GRACE_MS (sooner if the worker exits). */
  stop(): void;
  /**
   * Once the program exited and the rest of its group was killed: at its end, or after a stop's
   * grace period (what ignored the SIGTERM ran on till then, writing where it could).
   */
  gone: Promise<void>;
};

export type GroupOptions = {
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Run as this user and group (a root worker's per-task ids); supplementary groups are dropped. */
  uid?: number;
  gid?: number;
  /** Who owns the program's ends of stdout and stderr, when not `uid` (a program that takes its user itself: nsenter). */
  owner?: number;
  /** Start the program with SIGTERM ignored (see SUPERVISOR). */
  shieldTerm?: boolean;
  /** What the program reads on stdin (a file); without, it reads /dev/null. */
  stdin?: string;
  /** Descriptors the program gets from fd 5 up; the worker's copies are closed once it runs. */
  extraFds?: readonly number[];
};

/**
 * Spawns `argv` as the leader of its own process group, which dies with the worker, is killed
 * when the program ends (what it left in the background), and is stopped as a whole by `stop()`.
 * Standard output and error are pipes, as with spawn's 'pipe', but pipe(7), not sockets: the
 * program can open them again as /dev/stdout and /dev/stderr. It reads `opts.stdin` (a file).
 */
export async function spawnInGroup(argv: readonly string[], opts: GroupOptions): Promise<GroupChild> {
  const extra = opts.extraFds ?? [];
  let pipes: StdioPipes | undefined;
  let child: ChildProcess;
  try {
    pipes = await stdioPipes({ stdin: opts.stdin, owner: opts.owner ?? opts.uid });
    child = spawn('/bin/sh', ['-c', SUPERVISOR, 'svc-shell', opts.shieldTerm ? '1' : '0', ...argv], {
      cwd: opts.cwd,
      env: opts.env,
      uid: opts.uid,
      gid: opts.gid,
      detached: true,
      stdio: [...pipes.theirs, 'pipe', 'pipe', ...extra],
    });
  } catch (error) {
    pipes?.stdout.destroy();
    pipes?.stderr.destroy();
    throw error;
  } finally {
    // The program holds its ends now (or never will): the worker's copies would keep them open.
    pipes?.release();
    for (const fd of extra) closeSync(fd);
  }
  const lifeline = child.stdio[3];
  const status = child.stdio[4];
  if (!(status instanceof Readable)) throw new Error('spawn gave no status pipe');
  lifeline?.on('error', () => {});
  let released = false;
  const groupKilled = Promise.withResolvers<void>();
  const release = () => {
    released = true;
    lifeline?.destroy();
    groupKilled.resolve();
  };
  const ended = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let stopping = false;
  child.once('exit', () => {
    if (!stopping) release();
  });
  child.once('error', release);
  const closedStream = (stream: Readable) => new Promise<void>((resolve) => stream.once('close', () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return {
    child,
    stdout: pipes.stdout,
    stderr: pipes.stderr,
    closed: Promise.all([exited, closedStream(pipes.stdout), closedStream(pipes.stderr)]).then(([end]) => end),
    status,
    gone: Promise.all([ended, groupKilled.promise]).then(() => {}),
    stop() {
      // Once released, the group's id may be another's: there is nothing of ours left to stop.
      if (stopping || released) return;
      stopping = true;
      signalGroup(child.pid, 'SIGTERM');
      // The watcher keeps the group's id taken until it is released, so this cannot hit another group.
      const timer = setTimeout(() => {
        signalGroup(child.pid, 'SIGKILL');
        release();
      }, SHELL_KILL_GRACE_MS);
      timer.unref();
    },
  };
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
