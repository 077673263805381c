import { constants, lstatSync, mkdtempSync, openSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TASK_HOME, TASK_UID } from './shell-argv.ts';

/** What sandboxMounts asks of the host's file system (a test passes its own). */
export type HostFs = {
  /** What the path itself is (a symlink is not followed). */
  kind(path: string): 'dir' | 'file' | 'symlink' | 'missing';
  /** Whether the path, symlinks followed, exists (a dangling resolv.conf link does not). */
  resolves(path: string): boolean;
  readlink(path: string): string;
  /** The path with every symlink resolved (a path that resolves); without it, paths are taken as they are. */
  realpath?(path: string): string;
};

const realFs: HostFs = {
  kind(path) {
    try {
      const stat = lstatSync(path);
      return stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'dir' : 'file';
    } catch {
      return 'missing';
    }
  },
  resolves(path) {
    try {
      statSync(path);
      return true;
    } catch {
      return false;
    }
  },
  readlink: (path) => readlinkSync(path),
  realpath: (path) => realpathSync(path),
};

// Where programs and their libraries live; on merged-/usr systems most are symlinks into /usr,
// and are recreated as the same symlinks inside.
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

// What programs read from /etc to run, resolve names, check certificates and tell the system they
// run on (os-release, as scripts do): nothing else of /etc (no shadow, no ssl/private, no service
// configuration) is visible.
const ETC_ENTRIES = [
  '/etc/passwd',
  '/etc/group',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/resolv.conf',
  '/etc/nsswitch.conf',
  '/etc/gai.conf',
  '/etc/services',
  '/etc/protocols',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/alternatives',
  '/etc/mime.types',
  '/etc/os-release',
  '/etc/lsb-release',
  '/etc/debian_version',
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/pki/tls/certs',
  '/etc/pki/ca-trust/extracted',
];

// The sandbox's own mounts (shellArgv): a fresh /proc of the task's processes, a read-only /dev, a
// private /tmp and /dev/shm of SVC_SHELL_FILE_MB, the task's home. A bind of one (or of a directory
// holding one) came after them and put the host's in their place: its processes, its /tmp.
const OWN_MOUNTS = ['/proc', '/dev', '/dev/shm', '/tmp', TASK_HOME];

/** Whether a bind of `path` (symlinks resolved) would show the host's in place of one of OWN_MOUNTS, or the host's processes. */
function replacesOwnMount(path: string): boolean {
  return path.startsWith('/proc/') || OWN_MOUNTS.some((own) => own === path || own.startsWith(path === '/' ? '/' : `${path}/`));
}

/**
 * bwrap arguments that show a task the host's system directories and selected /etc entries,
 * read-only and as they exist on this host, plus `binds` (SVC_SHELL_SANDBOX_BINDS) read-only,
 * with `hidden` (the worker's own files) covered wherever those show them (hiddenMounts).
 * `missing` lists the binds that do not exist, `replacing` those that would replace the
 * sandbox's own /proc, /dev, /tmp, /dev/shm or home (the caller reports them; both are left out).
 */
export function sandboxMounts(binds: readonly string[], fs: HostFs = realFs, hidden: readonly string[] = []): { args: string[]; missing: string[]; replacing: string[] } {
  const args: string[] = [];
  // Each path bound at the same place inside: what the hidden paths are looked for under.
  const bound: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    const kind = fs.kind(dir);
    // A symlinked /bin stays a symlink inside; its target (under /usr) is bound already.
    if (kind === 'symlink') args.push('--symlink', fs.readlink(dir), dir);
    else if (kind === 'dir') {
      args.push('--ro-bind', dir, dir);
      bound.push(dir);
    }
  }
  // --ro-bind follows a symlinked source (/etc/resolv.conf → ../run/…), showing its content.
  for (const entry of ETC_ENTRIES) {
    if (!fs.resolves(entry)) continue;
    args.push('--ro-bind', entry, entry);
    bound.push(entry);
  }
  const missing: string[] = [];
  const replacing: string[] = [];
  for (const path of binds) {
    if (!fs.resolves(path)) missing.push(path);
    else if (replacesOwnMount(fs.realpath ? fs.realpath(path) : path)) replacing.push(path);
    else {
      args.push('--ro-bind', path, path);
      bound.push(path);
    }
  }
  return { args: [...args, ...hiddenMounts(hidden, bound, fs)], missing, replacing };
}

/**
 * bwrap arguments, after every bind, that cover each of `hidden` (the worker's own files: its
 * data directory, its secrets' files) wherever a bound path would show it inside: a directory by
 * an empty read-only tmpfs, a file by /dev/null. A data directory under /usr (a checkout in
 * /usr/src/app or /usr/local/lib/node_modules with the default ./.svc) or under a bind was the
 * task's to read, and a worker that is not root runs its tasks as its own user, who owns it.
 */
function hiddenMounts(hidden: readonly string[], bound: readonly string[], fs: HostFs): string[] {
  const real = (path: string) => (fs.realpath ? fs.realpath(path) : path);
  const sources = bound.map((inside) => ({ inside, host: real(inside) }));
  const args: string[] = [];
  const covered = new Set<string>();
  for (const path of hidden) {
    if (!fs.resolves(path)) continue;
    const target = real(path);
    const isDir = fs.kind(target) === 'dir';
    for (const { inside, host } of sources) {
      if (target !== host && !target.startsWith(host === '/' ? '/' : `${host}/`)) continue;
      const at = inside + target.slice(host.length);
      if (covered.has(at)) continue;
      covered.add(at);
      args.push(...(isDir ? ['--tmpfs', at, '--remount-ro', at] : ['--ro-bind', '/dev/null', at]));
    }
  }
  return args;
}

let kept: { passwd: number; group: number } | undefined;

/**
 * Descriptors, fresh each call (the caller closes them), of an /etc/passwd and /etc/group for a
 * root worker's task, TASK_UID inside: the host's files as they were at the first call, with an
 * entry naming TASK_UID `task` (home TASK_HOME) first. shellArgv copies them into the sandbox.
 */
export function taskUserFds(): { passwd: number; group: number } {
  if (!kept) {
    // Written once and unlinked at once: the worker keeps a descriptor of each, nothing is on disk.
    const dir = mkdtempSync(join(tmpdir(), 'svc-etc-'));
    try {
      const open = (name: 'passwd' | 'group', entry: string) => {
        let host = '';
        try {
          host = readFileSync(join('/etc', name), 'utf8');
        } catch {
          // No such file on this host: the task's entry alone.
        }
        // An entry of the host's with the same name or id would answer some lookups and not others.
        const others = host.split('\n').filter((line) => line && !line.startsWith('task:') && line.split(':')[2] !== String(TASK_UID));
        const path = join(dir, name);
        writeFileSync(path, `${[entry, ...others].join('\n')}\n`, { mode: 0o600 });
        return openSync(path, constants.O_RDONLY);
      };
      kept = { passwd: open('passwd', `task:x:${TASK_UID}:${TASK_UID}:shell task:${TASK_HOME}:/bin/sh`), group: open('group', `task:x:${TASK_UID}:`) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // Opened again through /proc: a description of its own, read from the start, by bwrap.
  const again = (fd: number) => openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY);
  return { passwd: again(kept.passwd), group: again(kept.group) };
}
