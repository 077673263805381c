import { spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { closeSync } from 'node:fs';
import { stdioPipes, type StdioPipes } from './stdio-pipes.ts';
import { supervisorArgv } from './supervisor-argv.ts';

/** After a stop's SIGTERM, the group gets this long to exit before SIGKILL. */
export const SHELL_KILL_GRACE_MS = 5_000;

export type GroupChild = {
  child: ChildProcess;
  /** The program's stdout and stderr: pipes (stdioPipes). */
  stdout: Readable;
  stderr: Readable;
  /** Once the program exited and its stdout and stderr are closed (spawn's 'close', with pipes of ours). */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** A pipe at the program's fd 4 (STATUS_FD), for notes of a wrapper that closes it before the command, and of the watchdog. */
  status: Readable;
  /** SIGTERM to the whole group now, SIGKILL after SHELL_KILL_GRACE_MS (sooner if the worker exits). */
  stop(): void;
  /**
   * Once the program exited and the rest of its group was killed: at its end, or after a stop's
   * grace period (what ignored the SIGTERM ran on till then, writing where it could).
   */
  gone: Promise<void>;
  /** Whether `deadlineMs` has passed since the spawn: only then may the watchdog have acted. */
  deadlinePassed(): boolean;
};

export type GroupOptions = {
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Run as this user and group (a root worker's per-task ids); supplementary groups are dropped. */
  uid?: number;
  gid?: number;
  /** Who owns the program's ends of stdout and stderr, when not `uid` (a program that takes its user itself: nsenter). */
  owner?: number;
  /** Start the program with SIGTERM ignored (see supervisor-argv.ts). */
  shieldTerm?: boolean;
  /**
   * A watchdog outside the worker (supervisor-argv.ts) gives the group SIGTERM this many ms after
   * the spawn, SIGKILL SHELL_KILL_GRACE_MS later, noting WATCHDOG_NOTE on `status` first.
   */
  deadlineMs?: number;
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
  let spawnedAt = 0;
  try {
    pipes = await stdioPipes({ stdin: opts.stdin, owner: opts.owner ?? opts.uid });
    const [sh, ...args] = supervisorArgv(argv, { shieldTerm: opts.shieldTerm, deadlineMs: opts.deadlineMs, graceMs: SHELL_KILL_GRACE_MS });
    // Before the spawn: the watchdog starts after it, so its deadline is never before this one's.
    spawnedAt = performance.now();
    child = spawn(sh, args, {
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
    deadlinePassed: () => opts.deadlineMs !== undefined && performance.now() - spawnedAt >= opts.deadlineMs,
    stop() {
      // Once released, the group's id may be another's: there is nothing of ours left to stop.
      if (stopping || released) return;
      stopping = true;
      signalGroup(child.pid, 'SIGTERM');
      // The watcher keeps the group's id taken until it is released, so this cannot hit another
      // group. (A watchdog's SIGKILL ends the watcher too, but comes SHELL_KILL_GRACE_MS after its
      // deadline, later than this one unless the worker stood still past it; the program's pid,
      // the group's id, stays taken until the worker reaps it.)
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
