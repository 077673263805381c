import { randomInt } from 'node:crypto';
import { closeSync } from 'node:fs';
import { chown } from 'node:fs/promises';
import { constants } from 'node:os';
import * as v from 'valibot';
import { SHELL_ENV_NAME } from '../../dsl/playbook.schema.ts';
import { CappedBuffer } from './capped-buffer.ts';
import { taskUserFds } from './sandbox-mounts.ts';
import { keyringFilterFd } from './keyring-filter.ts';
import { aborted, fail, invalidTask, ok, timedOut } from './outcome.ts';
import { hostAddresses, NamespaceError, takeNamespace, type NamespaceLease } from './network-namespaces.ts';
import { PASSWD_FD, RESERVED_ENV_PREFIX, shellArgv, taskEnvironment, TASK_HOME, type NamespaceEntry, type ShellHost } from './shell-argv.ts';
import { spawnInGroup, type GroupChild } from './spawn-in-group.ts';
import { WATCHDOG_NOTE } from './supervisor-argv.ts';
import { makeTaskHome } from './task-homes.ts';
import { processEnded } from './process-ended.ts';
import type { RenderedTask, TaskOutcome, ToolContext } from './types.ts';
import { ownKeysRecord } from '../../own-keys-record.ts';

// How long a program that ended before its abort came gets for the rest of its output to be read,
// in ms: a grandchild that left its group may hold the pipes open for ever.
const ENDED_OUTPUT_WAIT_MS = 1_000;
/** How long an aborted command's answer waits for what it wrote before the abort, when its pipes stay open. */
const ABORTED_OUTPUT_WAIT_MS = 100;
/**
 * How long after its timeout a task's watchdog (supervisor-argv.ts) ends it, in ms: the worker's
 * own timer comes first and says precisely what happened; the watchdog holds the limit when that
 * timer cannot fire (the worker SIGSTOPped, its event loop frozen).
 */
export const WATCHDOG_MARGIN_MS = 500;

// An environment value is text: rendered data reaches the command through the environment, never
// through its text, so whatever it holds stays data. No value (null) leaves the variable unset.
const envText = (value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
};
// A process's arguments and environment cannot hold NUL; say so instead of failing to spawn.
const NO_NUL = 'text without NUL characters';
const withoutNul = v.check((text: string) => !text.includes('\0'), NO_NUL);
// WRAPPER evaluates SVC_TASK_DEFERRED and SVC_TASK_OUTPUTS: set from a task's `env` (whose names
// may come from data: `env: "{{ workload.env }}"`), their values would run as commands.
const notReserved = v.check((name: string) => !name.startsWith(RESERVED_ENV_PREFIX), `a name not starting with ${RESERVED_ENV_PREFIX} (the sandbox's own)`);
const ShellTaskSchema = v.looseObject({
  command: v.pipe(v.string(), v.nonEmpty(), withoutNul),
  env: v.optional(v.nullable(ownKeysRecord(v.pipe(v.string(), v.regex(SHELL_ENV_NAME, 'a variable name (letters, digits, _)'), notReserved), v.pipe(v.unknown(), v.transform(envText), v.check((text) => text === undefined || !text.includes('\0'), NO_NUL))))),
  cwd: v.optional(v.nullable(v.pipe(v.string(), v.nonEmpty(), withoutNul))),
  stdin: v.optional(v.nullable(v.string())),
});

export type ShellData = { exit_code: number | null; stdout: string; stderr: string };
/** `timeoutMs`: the attempt's timeout_seconds, which `signal` holds too; the watchdog's deadline is WATCHDOG_MARGIN_MS later. */
export type ShellRequest = {
  command: string;
  env: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  stdin?: string;
  timeoutMs?: number;
  /** Masks a secret the output cap cut in two at the end of what it kept (SecretMask.maskCut). */
  maskCut?: (kept: string) => string;
};

// A root worker runs each sandboxed task as its own unprivileged user: the kernel exempts uid 0
// from RLIMIT_NPROC, and a user of its own counts only the task's processes against it.
const TASK_UID_MIN = 2 ** 30;
const TASK_UID_END = 2 ** 31;
// What a program prints when a fork or an allocation was refused; the error then names the limits.
const LIMIT_HINT = /Cannot fork|fork: .*Resource temporarily unavailable|Cannot allocate memory|MemoryError|[Oo]ut of memory|bad_alloc/;
// Linux's bounds on what a process starts with (MAX_ARG_STRLEN, and a quarter of the stack limit).
const TOO_BIG = 'its environment is too large: a variable (an env: value, a template output) holds at most 128 KiB, all of them together about 2 MiB; pass more through stdin';
// What a write to a full file system prints (ENOSPC): the sandbox's /tmp and /dev/shm are bounded.
const NO_SPACE = /No space left on device/;

/**
 * Runs `command` with `/bin/sh` in the worker's shell sandbox (ctx.shell): a private working
 * directory, an environment of only the task's `env` (values as text, lists and mappings as JSON)
 * and PATH, HOME, LANG, TMPDIR, the configured limits; optional cwd (inside) and stdin. Data
 * `{exit_code, stdout, stderr}`, each stream capped. A non-zero exit is an `exit_code` error, a
 * CPU or file size limit a `resource_limit` one; no usable sandbox is `sandbox_unavailable`.
 */
export async function shell(task: RenderedTask, ctx: ToolContext): Promise<TaskOutcome> {
  const parsed = v.safeParse(ShellTaskSchema, task);
  if (!parsed.success) return invalidTask('shell', parsed.issues);
  const { command, env, cwd, stdin } = parsed.output;
  if (ctx.signal.aborted) return aborted(ctx.signal);
  if (!ctx.shell) return fail('sandbox_unavailable', 'this worker runs no shell tasks: it was started without shell settings');
  if (ctx.shell.unavailable) return fail('sandbox_unavailable', ctx.shell.unavailable);
  const maskCut = ctx.secrets?.maskCut?.bind(ctx.secrets);
  return runShell(ctx.shell, { command, env: env ?? {}, cwd: cwd ?? undefined, stdin: stdin ?? undefined, timeoutMs: ctx.timeoutMs, maskCut }, ctx.signal);
}

/**
 * Runs one request as `host` says (sandboxed when host.bwrap is set) in a fresh private
 * directory (makeTaskHome: mode 0700 under the OS temp dir, removed after), in its own process
 * group (spawnInGroup): on abort the group gets SIGTERM, then SIGKILL; it dies with the worker.
 * With `req.timeoutMs`, a watchdog outside the worker does the same WATCHDOG_MARGIN_MS after it.
 */
export async function runShell(host: ShellHost, req: ShellRequest, signal: AbortSignal): Promise<TaskOutcome> {
  const home = await makeTaskHome();
  const workDir = home.path;
  let gone: Promise<void> = Promise.resolve();
  try {
    const id = host.bwrap && process.getuid?.() === 0 ? randomInt(TASK_UID_MIN, TASK_UID_END) : undefined;
    if (id !== undefined) await chown(workDir, id, id);
    return await spawnTask(host, req, signal, workDir, id, (group) => (gone = group.gone));
  } finally {
    // Removed once nothing of the task is left to write there: a stopped task's processes may run
    // on through the grace period, and files they made behind a removal that went first stayed on
    // the worker's disk for good. A stopped task's outcome does not wait for that.
    const removed = gone.catch(() => {}).then(() => home.remove()).catch(() => {});
    if (!signal.aborted) await removed;
  }
}

async function spawnTask(host: ShellHost, req: ShellRequest, signal: AbortSignal, workDir: string, id: number | undefined, started: (group: GroupChild) => void): Promise<TaskOutcome> {
  const { settings } = host;
  const env = taskEnvironment(req.env, { command: req.command, cwd: req.cwd, home: host.bwrap ? TASK_HOME : workDir });
  let group: GroupChild;
  // With the `external` network, a namespace made ahead (network-namespaces.ts), lent until the
  // task's processes are all gone: concurrent tasks never share one.
  let lease: NamespaceLease | undefined;
  // The lease's descriptors until spawnInGroup takes them (it closes what it is given).
  let held: number[] = [];
  try {
    if (host.bwrap && host.pasta && host.nsenter && host.ip && settings.network === 'external') {
      lease = await takeNamespace(host.pasta, host.ip);
      held = [lease.netFd, lease.userFd];
    }
    // A root worker's task user is named inside (TASK_UID, `task`): bwrap reads its /etc files.
    const user = id === undefined ? undefined : taskUserFds();
    const extraFds = user ? [user.passwd, user.group] : [];
    let entry: NamespaceEntry | undefined;
    if (lease) {
      // The task gets the namespace's descriptors after the /etc files, from PASSWD_FD up. A root
      // worker enters the network namespace as root and nsenter then takes the task's uid; a
      // worker not root enters pasta's user namespace first, as pasta's own child was in it.
      entry = { netFd: PASSWD_FD + extraFds.length, ...(id === undefined ? { userFd: PASSWD_FD + extraFds.length + 1, self: workerIds() } : { uid: id }) };
      extraFds.push(lease.netFd);
      if (id === undefined) extraFds.push(lease.userFd);
      else closeSync(lease.userFd);
    }
    // Last, after the fds whose numbers the wrapper closes: bwrap reads it and closes it itself.
    const seccompFd = host.bwrap ? PASSWD_FD + extraFds.length : undefined;
    if (host.bwrap) extraFds.push(keyringFilterFd());
    held = [];
    group = await spawnInGroup(shellArgv(host, workDir, user !== undefined, entry, seccompFd, { self: id === undefined ? workerIds() : undefined, fenced: hostAddresses() }), {
      cwd: host.bwrap ? '/' : workDir,
      env,
      uid: entry ? undefined : id,
      gid: entry ? undefined : id,
      owner: id,
      shieldTerm: Boolean(host.bwrap),
      deadlineMs: req.timeoutMs === undefined ? undefined : req.timeoutMs + WATCHDOG_MARGIN_MS,
      stdin: req.stdin,
      extraFds,
    });
  } catch (error) {
    for (const fd of held) closeSync(fd);
    lease?.release();
    if (error instanceof NamespaceError) return fail('sandbox_unavailable', error.message);
    // Node's message may quote the environment (values can be secrets): name the code only.
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unknown error';
    if (code === 'E2BIG') return fail('spawn', `cannot start the shell (E2BIG): ${TOO_BIG}`);
    return fail('spawn', `cannot start the shell (${code})`);
  }
  started(group);
  void group.closed.then(() => lease?.release());
  return new Promise<TaskOutcome>((resolve) => {
    const { child } = group;
    const stdout = new CappedBuffer(settings.outputBytes);
    const stderr = new CappedBuffer(settings.outputBytes);
    let status = '';
    group.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    group.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    group.status.on('data', (chunk: Buffer) => (status += chunk.toString('utf8')));
    group.status.on('error', () => {});
    const statusClosed = new Promise<void>((done) => group.status.once('close', () => done()));

    let settled = false;
    // Aborted while it ran: the answer says so, however the program then ends.
    let stopping = false;
    const finish = (outcome: TaskOutcome) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const data = (exitCode: number | null): ShellData => ({ exit_code: exitCode, stdout: stdout.text(req.maskCut), stderr: stderr.text(req.maskCut) });

    // A grandchild that left the group may still hold the pipes; do not wait for them.
    const letGoOfPipes = () => {
      group.stdout.destroy();
      group.stderr.destroy();
      group.status.destroy();
    };
    const onAbort = () => {
      // The program ended before the abort came, but the worker has not taken that in (it stood
      // still: SIGSTOPped, or busy): what it did stands, and is reported as it ended, not as stopped.
      if (child.exitCode !== null || child.signalCode !== null || (child.pid !== undefined && processEnded(child.pid))) {
        setTimeout(letGoOfPipes, ENDED_OUTPUT_WAIT_MS).unref();
        return;
      }
      // What the program wrote before the abort may still be in the pipes, unread (a busy
      // worker): the answer waits for them to close, or ABORTED_OUTPUT_WAIT_MS where something
      // that ignores SIGTERM keeps them open.
      stopping = true;
      group.stop();
      setTimeout(answerAborted, ABORTED_OUTPUT_WAIT_MS).unref();
    };
    const answerAborted = () => {
      letGoOfPipes();
      finish(aborted(signal, data(null)));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // The pipes took a moment to open: an abort in it has passed already.
    if (signal.aborted) onAbort();

    child.on('error', (error) => {
      finish(fail('spawn', `cannot start the shell: ${error.message}`));
    });
    void group.closed.then(async ({ code, signal: killedBy }) => {
      if (stopping) return answerAborted();
      // Past its deadline the watchdog may have ended the program while the worker stood still:
      // its note (written before its signal) is read once the status pipe closes, which the
      // group's end brings (the watchdog dies with it). An attempt it ended timed out.
      if (group.deadlinePassed()) {
        await Promise.race([statusClosed, new Promise((done) => setTimeout(done, ENDED_OUTPUT_WAIT_MS).unref())]);
        if (status.includes(WATCHDOG_NOTE)) return finish(timedOut(data(null)));
      }
      if (status.includes('cwd')) return finish(fail('spawn', `cannot start the shell in ${req.cwd}: no such directory${host.bwrap ? ' in the sandbox' : ''}`));
      if (code === 0) return finish(ok(data(0)));
      // bwrap (and a shell whose last command was killed) reports a signal as exit code 128 + n.
      const signalName = killedBy ?? (code !== null && code > 128 ? signalNames.get(code - 128) : undefined);
      if (signalName === 'SIGXCPU') return finish(fail('resource_limit', `CPU time limit (${settings.cpuSeconds} s) exceeded: command killed by signal SIGXCPU`, data(code)));
      if (signalName === 'SIGXFSZ') return finish(fail('resource_limit', `file size limit (${settings.fileMb} MB) exceeded: command killed by signal SIGXFSZ`, data(code)));
      if (signalName) return finish(fail('exit_code', `command killed by signal ${signalName}`, data(code)));
      finish(fail('exit_code', `command exited with code ${code}${limitHint(host, stderr.text())}`, data(code)));
    });
  });
}

// Why a command that failed may have failed, from what it printed: a limit of the sandbox's.
function limitHint(host: ShellHost, stderr: string): string {
  const { settings } = host;
  if (host.prlimit && LIMIT_HINT.test(stderr)) return `; it may have hit a limit (at most ${settings.maxProcesses} processes, ${settings.memoryMb} MB of memory per process)`;
  if (host.bwrap && NO_SPACE.test(stderr)) return `; it may have filled /tmp or /dev/shm (at most ${settings.fileMb} MB each in the sandbox)`;
  return '';
}

// The worker's own uid and gid, which a task of a worker not root keeps in pasta's user namespace.
function workerIds(): { uid: number; gid: number } | undefined {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  return uid === undefined || gid === undefined ? undefined : { uid, gid };
}

const signalNames = new Map<number, string>(Object.entries(constants.signals).map(([name, n]) => [n, name]));
