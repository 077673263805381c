import { describe, expect, it } from 'vitest';
import { sandboxMounts, type HostFs } from '../../../src/worker/tools/sandbox-mounts.ts';
import { FENCE, GROUP_FD, limitArgs, PASSWD_FD, PASTA_ARGS, shellArgv, taskEnvironment, TASK_HOME, TASK_PATH, TASK_UID, type ShellHost } from '../../../src/worker/tools/shell-argv.ts';
import { DEFAULT_SHELL_SETTINGS } from '../../../src/worker/tools/shell-settings.ts';

// A merged-/usr host: /bin, /lib… are symlinks; resolv.conf dangles; /data exists, /nope does not.
const fakeFs = (): HostFs => {
  const dirs = new Set(['/usr', '/etc/alternatives', '/etc/ssl/certs', '/data']);
  const files = new Set(['/etc/passwd', '/etc/group', '/etc/hosts', '/etc/ld.so.cache']);
  const links: Record<string, string> = { '/bin': 'usr/bin', '/lib': 'usr/lib', '/lib64': 'usr/lib64', '/sbin': 'usr/sbin', '/etc/resolv.conf': '../run/resolv.conf' };
  return {
    kind: (p) => (dirs.has(p) ? 'dir' : files.has(p) ? 'file' : p in links ? 'symlink' : 'missing'),
    resolves: (p) => dirs.has(p) || files.has(p) || (p in links && p !== '/etc/resolv.conf'),
    readlink: (p) => links[p],
  };
};

describe('sandboxMounts', () => {
  it('binds what exists read-only, recreates symlinked system dirs, reports missing binds', () => {
    const { args, missing } = sandboxMounts(['/data', '/nope'], fakeFs());
    expect(args).toEqual([
      '--ro-bind', '/usr', '/usr',
      '--symlink', 'usr/bin', '/bin',
      '--symlink', 'usr/sbin', '/sbin',
      '--symlink', 'usr/lib', '/lib',
      '--symlink', 'usr/lib64', '/lib64',
      '--ro-bind', '/etc/passwd', '/etc/passwd',
      '--ro-bind', '/etc/group', '/etc/group',
      '--ro-bind', '/etc/hosts', '/etc/hosts',
      '--ro-bind', '/etc/ld.so.cache', '/etc/ld.so.cache',
      '--ro-bind', '/etc/alternatives', '/etc/alternatives',
      '--ro-bind', '/etc/ssl/certs', '/etc/ssl/certs',
      '--ro-bind', '/data', '/data',
    ]);
    expect(missing).toEqual(['/nope']);
    // Never a writable bind, never the worker's files.
    expect(args).not.toContain('--bind');
  });
});

describe('shellArgv', () => {
  const host: ShellHost = { settings: DEFAULT_SHELL_SETTINGS, prlimit: '/usr/bin/prlimit', bwrap: '/usr/bin/bwrap', mounts: ['--ro-bind', '/usr', '/usr'] };

  it('wraps bwrap in prlimit with the hard limits, and binds only the work dir writable', () => {
    const argv = shellArgv(host, '/tmp/svc-task-x');
    expect(argv.slice(0, 6)).toEqual(['/usr/bin/prlimit', '--cpu=300:301', `--data=${1024 ** 3}`, '--nproc=256', `--fsize=${1024 ** 3}`, '--']);
    const bwrap = argv.slice(6, argv.indexOf('/usr/bin/env'));
    expect(bwrap).toEqual([
      '/usr/bin/bwrap', '--unshare-all', '--unshare-user', '--disable-userns', '--share-net', '--die-with-parent',
      '--proc', '/proc', '--dev', '/dev', '--remount-ro', '/dev',
      '--size', String(1024 ** 3), '--tmpfs', '/dev/shm', '--size', String(1024 ** 3), '--tmpfs', '/tmp',
      '--ro-bind', '/usr', '/usr',
      '--bind', '/tmp/svc-task-x', TASK_HOME, '--remount-ro', '/', '--chdir', TASK_HOME, '--',
    ]);
    expect(argv.slice(argv.indexOf('/usr/bin/env'), -2)).toEqual(['/usr/bin/env', '--default-signal=TERM', '/bin/sh', '-c']);
  });

  it("gives a root worker's task user a name inside: uid and gid TASK_UID, with the /etc/passwd and /etc/group that name it", () => {
    const argv = shellArgv(host, '/w', true);
    expect(argv.slice(argv.indexOf('--disable-userns') + 1, argv.indexOf('--share-net'))).toEqual(['--uid', String(TASK_UID), '--gid', String(TASK_UID)]);
    // After the host's mounts, so that they cover the host's files.
    expect(argv.slice(argv.indexOf('/usr') + 2, argv.indexOf('--bind'))).toEqual(['--ro-bind-data', String(PASSWD_FD), '/etc/passwd', '--ro-bind-data', String(GROUP_FD), '/etc/group']);
    expect(shellArgv(host, '/w')).not.toContain('--uid');
  });

  it('keeps the network out when it is not allowed, and the sandbox off runs /bin/sh under prlimit only', () => {
    expect(shellArgv({ ...host, settings: { ...DEFAULT_SHELL_SETTINGS, network: 'none' } }, '/w')).not.toContain('--share-net');
    const off = shellArgv({ settings: { ...DEFAULT_SHELL_SETTINGS, sandbox: false }, prlimit: '/usr/bin/prlimit', mounts: [] }, '/w');
    expect(off).not.toContain('/usr/bin/bwrap');
    expect(off.slice(-4, -2)).toEqual(['/bin/sh', '-c']);
  });

  it("gives an `external` task pasta's namespace, outside the limits, forwarding no port; the sandbox then outlives pasta's SIGTERM", () => {
    const argv = shellArgv({ ...host, pasta: '/usr/bin/pasta', settings: { ...DEFAULT_SHELL_SETTINGS, network: 'external' } }, '/w');
    expect(argv.slice(0, argv.indexOf('/usr/bin/prlimit'))).toEqual(['/usr/bin/pasta', ...PASTA_ARGS, '--']);
    expect(PASTA_ARGS).toEqual(expect.arrayContaining(['--no-map-gw', '--foreground']));
    for (const option of ['--tcp-ports', '--udp-ports', '--tcp-ns', '--udp-ns']) expect(PASTA_ARGS[PASTA_ARGS.indexOf(option) + 1]).toBe('none');
    expect(argv).toContain('--share-net');
    expect(argv).not.toContain('--die-with-parent');
    // A worker not root starts it as root of pasta's user namespace: it drops every capability and
    // is the worker's user again (audit-pasta-own-not-root); a root worker's task user is TASK_UID.
    const own = shellArgv({ ...host, pasta: '/usr/bin/pasta', settings: { ...DEFAULT_SHELL_SETTINGS, network: 'external' } }, '/w', false, undefined, undefined, { self: { uid: 1001, gid: 1002 } });
    expect(own.join(' ')).toContain('--cap-drop ALL --uid 1001 --gid 1002');
    // With ip, FENCE keeps it off this machine's addresses before prlimit (audit-external-host-addresses).
    const fenced = shellArgv({ ...host, pasta: '/usr/bin/pasta', ip: '/usr/sbin/ip', settings: { ...DEFAULT_SHELL_SETTINGS, network: 'external' } }, '/w', false, undefined, undefined, { fenced: ['10.0.0.5', 'fe80::1'] });
    expect(fenced.slice(PASTA_ARGS.length + 2, fenced.indexOf('/usr/bin/prlimit'))).toEqual(['/bin/sh', '-c', `${FENCE}\nexec "$@"`, 'sh', '/usr/sbin/ip', '10.0.0.5', 'fe80::1', '--']);
    const root = shellArgv({ ...host, pasta: '/usr/bin/pasta', settings: { ...DEFAULT_SHELL_SETTINGS, network: 'external' } }, '/w', true);
    expect(root).not.toContain('--cap-drop');
    // The host's network (the default) or none: no pasta, the sandbox dies with its parent.
    for (const network of ['host', 'none'] as const) {
      const argv = shellArgv({ ...host, pasta: '/usr/bin/pasta', settings: { ...DEFAULT_SHELL_SETTINGS, network } }, '/w');
      expect(argv[0]).toBe('/usr/bin/prlimit');
      expect(argv).toContain('--die-with-parent');
      expect(argv.includes('--share-net')).toBe(network === 'host');
    }
  });

  it('with a namespace made ahead, enters it with nsenter (no pasta of its own), outside the limits; the sandbox dies with its parent', () => {
    const external: ShellHost = { ...host, pasta: '/usr/bin/pasta', nsenter: '/usr/bin/nsenter', settings: { ...DEFAULT_SHELL_SETTINGS, network: 'external' } };
    // A root worker: the network namespace only, then the task's uid.
    const root = shellArgv(external, '/w', true, { netFd: 7, uid: 1234 });
    expect(root.slice(0, root.indexOf('/usr/bin/prlimit'))).toEqual(['/usr/bin/nsenter', '--net=/proc/self/fd/7', '--setuid', '1234', '--setgid', '1234', '--']);
    expect(root).not.toContain('/usr/bin/pasta');
    expect(root).toContain('--share-net');
    expect(root).toContain('--die-with-parent');
    // A worker not root: pasta's user namespace first, keeping its credentials.
    const user = shellArgv(external, '/w', false, { netFd: 5, userFd: 6, self: { uid: 1001, gid: 1002 } });
    expect(user.slice(0, user.indexOf('/usr/bin/prlimit'))).toEqual(['/usr/bin/nsenter', '--user=/proc/self/fd/6', '--preserve-credentials', '--net=/proc/self/fd/5', '--']);
    // bwrap starts as root of pasta's user namespace: the task drops every capability and is the worker's user again.
    expect(user.join(' ')).toContain('--cap-drop ALL --uid 1001 --gid 1002');
    expect(root).not.toContain('--cap-drop');
    // Not for the host's network or none, whatever it is given.
    for (const network of ['host', 'none'] as const) expect(shellArgv({ ...external, settings: { ...DEFAULT_SHELL_SETTINGS, network } }, '/w', false, { netFd: 5 })[0]).toBe('/usr/bin/prlimit');
  });

  it('gives bwrap the keyring filter at the fd it is told, and none without one', () => {
    const argv = shellArgv(host, '/w', false, undefined, 8);
    expect(argv.join(' ')).toContain('--seccomp 8');
    expect(argv.indexOf('--seccomp')).toBeLessThan(argv.indexOf('/usr/bin/env'));
    expect(shellArgv(host, '/w')).not.toContain('--seccomp');
  });

  it('never puts the command in an argument', () => {
    const env = taskEnvironment({}, { command: 'echo very-secret', home: TASK_HOME });
    expect(shellArgv(host, '/w').join(' ')).not.toContain('very-secret');
    expect(env.SVC_TASK_COMMAND).toBe('echo very-secret');
  });

  it('sets the limits from the settings', () => {
    expect(limitArgs({ ...DEFAULT_SHELL_SETTINGS, cpuSeconds: 5, memoryMb: 64, maxProcesses: 8, fileMb: 2 })).toEqual(['--cpu=5:6', `--data=${64 * 1024 ** 2}`, '--nproc=8', `--fsize=${2 * 1024 ** 2}`]);
  });
});

describe('taskEnvironment', () => {
  it('is PATH, HOME, LANG, TMPDIR and the declared env; loader variables wait for the sandbox', () => {
    expect(taskEnvironment({ A: '1', PATH: '/opt/bin', GONE: undefined, LD_PRELOAD: '/x.so', BASH_ENV: '/y' }, { command: 'true', cwd: 'sub', home: '/h' })).toEqual({
      PATH: '/opt/bin',
      HOME: '/h',
      LANG: 'C.UTF-8',
      TMPDIR: '/tmp',
      A: '1',
      SVC_TASK_ENV_LD_PRELOAD: '/x.so',
      SVC_TASK_ENV_BASH_ENV: '/y',
      SVC_TASK_DEFERRED: 'LD_PRELOAD BASH_ENV',
      SVC_TASK_COMMAND: 'true',
      SVC_TASK_CWD: 'sub',
    });
    expect(taskEnvironment({}, { command: 'true', home: '/h' }).PATH).toBe(TASK_PATH);
    // A command's template outputs: named for the wrapper, which keeps them out of what the command runs.
    expect(taskEnvironment({ SVC_TEMPLATE_1: 'a', SVC_TEMPLATE_2: 'b', SVC_TEMPLATE_X: 'c' }, { command: 'true', home: '/h' })).toMatchObject({ SVC_TEMPLATE_1: 'a', SVC_TEMPLATE_2: 'b', SVC_TASK_OUTPUTS: 'SVC_TEMPLATE_1 SVC_TEMPLATE_2' });
  });
});
