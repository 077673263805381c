import { SHELL_OUTPUT_PREFIX } from '../../dsl/shell-outputs.ts';
import type { ShellSettings } from './shell-settings.ts';

/** Where a sandboxed task's private working directory appears inside; also its HOME. */
export const TASK_HOME = '/home/task';
/** A root worker's task (a random uid of its own outside the sandbox) has this uid and gid inside: `task` (taskUserFds). */
export const TASK_UID = 1000;
/** The PATH a task starts with (its `env:` may replace it): the system's, never the worker's. */
export const TASK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Names the sandbox's wrapper reads (and evaluates): a task's `env`, data maybe, may not set them. */
export const RESERVED_ENV_PREFIX = 'SVC_TASK_';
/** The fd on which the wrapper script notes a cwd it could not enter (closed before the command runs). */
export const STATUS_FD = 4;
/** The fds from which bwrap copies a root worker's task user's /etc/passwd and /etc/group (taskUserFds). */
export const PASSWD_FD = 5;
export const GROUP_FD = 6;
/** The highest fd a task may get from the worker (a namespace's, NamespaceEntry): closed for its command. */
export const LAST_EXTRA_FD = 7;

/** The programs and host mounts a worker found at start (probeShellSandbox). */
export type ShellHost = {
  settings: ShellSettings;
  prlimit?: string; // absolute path; undefined: not found (limits cannot be set)
  bwrap?: string; // absolute path; set only when the sandbox is on and runs
  /**
   * Absolute path of passt's `pasta`; set only when the sandbox is on with the `external` network
   * and runs under it: the task then reaches the network from a namespace of its own, not this
   * machine's loopback services (the API, the service database, whatever listens on 127.0.0.1).
   */
  pasta?: string;
  /** Absolute path of util-linux's nsenter, with `pasta`: tasks enter namespaces made ahead. */
  nsenter?: string;
  /** Absolute path of iproute2's `ip`, with `pasta`: it keeps the namespace off this machine's own addresses (FENCE). */
  ip?: string;
  mounts: readonly string[]; // bwrap arguments for the system directories and binds
  /** Set when the sandbox is on but cannot run: why, and how to fix it. Shell tasks are refused. */
  unavailable?: string;
};

// Variables that act on the loader or on a shell before the task's command runs (in prlimit and
// bwrap, which run outside the sandbox): the task's values for them are set only inside, by
// WRAPPER, right before its command. Names are SHELL_ENV_NAME-checked, so safe to eval.
const DEFERRED = /^(LD_\w*|GLIBC_TUNABLES|MALLOC_\w*|GCONV_PATH|LOCPATH|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|IFS|CDPATH)$/;

// The variables that hold a command's template outputs (src/dsl/shell-outputs.ts).
const OUTPUT_VARIABLE = new RegExp(`^${SHELL_OUTPUT_PREFIX}[0-9]+$`);

// Runs as `/bin/sh -c WRAPPER sh` with the command in SVC_TASK_COMMAND (so no command line on the
// host shows it): restores deferred variables, keeps the template outputs' variables in this
// shell only (the command expands them; the programs it runs get what it passes them, not the
// lot in their environment), enters the task's cwd (or notes on STATUS_FD that it cannot, and
// exits), closes STATUS_FD (and the fds bwrap read /etc files from) and evaluates the command.
const WRAPPER = [
  'for n in $SVC_TASK_DEFERRED; do eval "export $n=\\"\\${SVC_TASK_ENV_$n}\\"; unset SVC_TASK_ENV_$n"; done',
  'for n in $SVC_TASK_OUTPUTS; do eval "_svc_v=\\${$n}; unset $n; $n=\\$_svc_v"; done',
  'c=$SVC_TASK_COMMAND d=$SVC_TASK_CWD',
  'unset SVC_TASK_DEFERRED SVC_TASK_OUTPUTS SVC_TASK_COMMAND SVC_TASK_CWD _svc_v',
  `if [ -n "$d" ] && ! CDPATH= cd -- "$d" 2>/dev/null; then echo cwd >&${STATUS_FD}; exit 1; fi`,
  `exec ${STATUS_FD}>&- ${PASSWD_FD}<&- ${GROUP_FD}<&- ${LAST_EXTRA_FD}<&-`,
  'eval "$c"',
].join('\n');

/**
 * The environment a task's processes start with: PATH, HOME, LANG, TMPDIR and the task's
 * declared `env` (undefined leaves a variable unset), carrying the command and cwd for WRAPPER.
 * Nothing of the worker's own environment.
 */
export function taskEnvironment(declared: Readonly<Record<string, string | undefined>>, task: { command: string; cwd?: string; home: string }): Record<string, string> {
  const env: Record<string, string> = { PATH: TASK_PATH, HOME: task.home, LANG: 'C.UTF-8', TMPDIR: '/tmp' };
  const deferred: string[] = [];
  const outputs: string[] = [];
  for (const [name, value] of Object.entries(declared)) {
    if (value === undefined) {
      delete env[name];
    } else if (DEFERRED.test(name)) {
      deferred.push(name);
      env[`SVC_TASK_ENV_${name}`] = value;
    } else {
      if (OUTPUT_VARIABLE.test(name)) outputs.push(name);
      env[name] = value;
    }
  }
  if (deferred.length) env.SVC_TASK_DEFERRED = deferred.join(' ');
  if (outputs.length) env.SVC_TASK_OUTPUTS = outputs.join(' ');
  env.SVC_TASK_COMMAND = task.command;
  env.SVC_TASK_CWD = task.cwd ?? '';
  return env;
}

/**
 * prlimit options setting each task process's hard limits: CPU seconds (soft one second lower,
 * so the task gets SIGXCPU before SIGKILL), data segment (malloc'd memory; not address space,
 * which V8 and JVMs reserve by the gigabyte), processes of its user, and file size.
 */
export function limitArgs(settings: ShellSettings): string[] {
  const MiB = 1024 * 1024;
  return [
    `--cpu=${settings.cpuSeconds}:${settings.cpuSeconds + 1}`,
    `--data=${settings.memoryMb * MiB}`,
    `--nproc=${settings.maxProcesses}`,
    `--fsize=${settings.fileMb * MiB}`,
  ];
}

/**
 * pasta's options: configure the namespace's interface like the host's (its addresses, routes,
 * resolver), forward no port either way (`-T none` keeps the task off the host's loopback ports,
 * which pasta forwards by default), and do not map the gateway address to the host (which would
 * be the host's loopback again). It stays in the foreground: the process group holds it, and its
 * exit status is the task's.
 */
export const PASTA_ARGS: readonly string[] = [
  '--config-net', '--quiet', '--foreground', '--no-map-gw',
  '--tcp-ports', 'none', '--udp-ports', 'none', '--tcp-ns', 'none', '--udp-ns', 'none',
];

/**
 * Run as `/bin/sh -c FENCE sh IP ADDRESS… --` by root of pasta's user namespace, before anything
 * else there: pasta connects a task to whatever address it names, this machine's own among them,
 * so a service listening on all addresses (0.0.0.0, ::) answered the task at the machine's other
 * addresses (a docker0 bridge, a second interface, a link-local one); `-T none` and --no-map-gw
 * keep only the loopback away. A policy rule per address (ahead of the main table, after the
 * namespace's own addresses) refuses a connection there (EACCES), whatever interface it names.
 * The arguments after `--` are left for what follows (a holder's wait, or `exec "$@"`).
 */
export const FENCE = [
  'ip=$1; shift',
  'while [ "$1" != -- ]; do case $1 in *:*) f=-6 ;; *) f=-4 ;; esac; "$ip" $f rule add to "$1" prohibit || exit 1; shift; done',
  'shift',
].join('\n');

/**
 * A network namespace made ahead (network-namespaces.ts) that a task enters with nsenter: the fds
 * at which the task gets its network namespace and (a worker not root) its user namespace, and
 * (a root worker) the task's uid, which nsenter takes once it has entered (setns needs root).
 */
export type NamespaceEntry = {
  netFd: number;
  userFd?: number;
  uid?: number;
  /** With userFd: the worker's own uid and gid, which its task keeps inside the sandbox (userNamespaceTask). */
  self?: { uid: number; gid: number };
};

/**
 * bwrap's options for a task in pasta's user namespace (a worker not root, entering a namespace
 * made ahead or under pasta of its own when nsenter is missing): the worker's
 * uid is that namespace's root, so bwrap starts as root there and, as root, keeps every
 * capability for the sandbox: the task ran as uid 0 with all of them in its own namespaces and
 * could mount a tmpfs of any size past SVC_SHELL_FILE_MB. It drops them all and is the worker's
 * user again, as it is under the host's network.
 */
function userNamespaceTask(self: { uid: number; gid: number } | undefined): string[] {
  const ids = self ? ['--uid', String(self.uid), '--gid', String(self.gid)] : [];
  return ['--cap-drop', 'ALL', ...ids];
}

/** nsenter's argv entering `entry` (util-linux): it execs the rest, so the task's exit status is its own. */
export function nsenterArgs(nsenter: string, entry: NamespaceEntry): string[] {
  return [
    nsenter,
    // The user namespace first (a worker not root has no right to enter the network one without
    // it), keeping the worker's credentials, as pasta's own child had them.
    ...(entry.userFd !== undefined ? [`--user=/proc/self/fd/${entry.userFd}`, '--preserve-credentials'] : []),
    `--net=/proc/self/fd/${entry.netFd}`,
    ...(entry.uid !== undefined ? ['--setuid', String(entry.uid), '--setgid', String(entry.uid)] : []),
    '--',
  ];
}

/**
 * The argv that runs a task: nsenter into `namespace` (with the `external` network), or pasta (with the `external` network: `host.pasta`) around prlimit
 * (when found) around bwrap (when the sandbox is on) around
 * `/bin/sh -c WRAPPER`. In the sandbox the task sees only `host.mounts`, a fresh /proc, a
 * read-only /dev, a bounded /tmp and /dev/shm, and `workDir` at TASK_HOME (all it can write),
 * in new user, pid, ipc, uts, cgroup (and, unless it shares the host's, network) namespaces, with no user
 * namespace of its own; it dies with its parent (the worker). `taskUser`: a root worker's task
 * user is TASK_UID inside, named by the /etc/passwd and /etc/group read from PASSWD_FD, GROUP_FD.
 * `seccompFd`: where bwrap reads the seccomp program that refuses the task the kernel's keyrings.
 * `own`, for a task under pasta of its own: `self`, the worker's uid and gid, which a worker not
 * root gives it, and `fenced`, this machine's addresses, which FENCE keeps it off (with `host.ip`).
 */
export function shellArgv(
  host: ShellHost,
  workDir: string,
  taskUser = false,
  namespace?: NamespaceEntry,
  seccompFd?: number,
  own: { self?: { uid: number; gid: number }; fenced?: readonly string[] } = {},
): string[] {
  const shell = ['/bin/sh', '-c', WRAPPER, 'sh'];
  const limited = (argv: string[]) => (host.prlimit ? [host.prlimit, ...limitArgs(host.settings), '--', ...argv] : argv);
  if (!host.bwrap) return limited(shell);
  const scratchBytes = host.settings.fileMb * 1024 * 1024;
  const external = host.settings.network === 'external';
  const entering = Boolean(namespace && host.nsenter && external);
  const withPasta = Boolean(host.pasta && external && !entering);
  const bwrap = [
    host.bwrap,
    '--unshare-all',
    // No user namespace of its own inside (unshare -r): as its root a task could mount a tmpfs
    // past the bounds below, and reach more of the kernel than a plain user does.
    '--unshare-user',
    '--disable-userns',
    // A root worker's task, a random uid outside, is `task` inside: whoami and getpwuid() answer.
    ...(taskUser ? ['--uid', String(TASK_UID), '--gid', String(TASK_UID)] : []),
    ...(entering && namespace?.userFd !== undefined ? userNamespaceTask(namespace.self) : []),
    // Under pasta of its own (no nsenter), a worker not root starts its task as root of pasta's
    // user namespace, as one entering a namespace made ahead does: the same drop of capabilities.
    ...(withPasta && !taskUser ? userNamespaceTask(own.self) : []),
    // No keyring calls (keyring-filter.ts): the worker's session keyring would be the task's to read.
    ...(seccompFd !== undefined ? ['--seccomp', String(seccompFd)] : []),
    // The host's network, or pasta's namespace (`external`); none: a namespace of its own, empty.
    ...(host.settings.network !== 'none' ? ['--share-net'] : []),
    // Its parent is the worker's spawn, or pasta, which a stop's SIGTERM ends at once (it takes no
    // shield): under pasta the sandbox does not die with it, so that its processes keep the stop's
    // grace period; the process group's watcher still kills it all when the worker dies.
    ...(withPasta ? [] : ['--die-with-parent']),
    // No --new-session: spawnInGroup already starts the task in a session of its own, with no
    // controlling terminal to inject input into (what --new-session guards against); a second
    // session would take the sandbox out of the task's process group, which a stop signals.
    '--proc', '/proc',
    // bwrap's /dev, its root and /tmp are tmpfs in the host's memory, writable and of no bound: a
    // task could fill the machine's memory there. /dev and the root are read-only (device nodes
    // still work); /tmp and /dev/shm, where programs expect to write, hold SVC_SHELL_FILE_MB each.
    '--dev', '/dev',
    '--remount-ro', '/dev',
    '--size', String(scratchBytes), '--tmpfs', '/dev/shm',
    '--size', String(scratchBytes), '--tmpfs', '/tmp',
    ...host.mounts,
    ...(taskUser ? ['--ro-bind-data', String(PASSWD_FD), '/etc/passwd', '--ro-bind-data', String(GROUP_FD), '/etc/group'] : []),
    '--bind', workDir, TASK_HOME,
    '--remount-ro', '/',
    '--chdir', TASK_HOME,
    '--',
  ];
  // bwrap starts with SIGTERM ignored (spawnInGroup's shieldTerm), so that a stop's SIGTERM does
  // not tear the sandbox down at once: env gives the task's processes the default action back.
  const argv = limited([...bwrap, '/usr/bin/env', '--default-signal=TERM', ...shell]);
  // Outside prlimit: the limits are the task's, not those of the network it is given.
  if (entering && namespace && host.nsenter) return [...nsenterArgs(host.nsenter, namespace), ...argv];
  if (!withPasta || !host.pasta) return argv;
  const fence = host.ip ? ['/bin/sh', '-c', `${FENCE}\nexec "$@"`, 'sh', host.ip, ...(own.fenced ?? []), '--'] : [];
  return [host.pasta, ...PASTA_ARGS, '--', ...fence, ...argv];
}
