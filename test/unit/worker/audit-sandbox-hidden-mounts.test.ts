// The worker's own files are covered inside the sandbox wherever a bound path shows them: a data
// directory in a checkout under /usr (/usr/src/app/.svc), a secret's file under a bind, found
// through the symlinks of either side; nothing is added for what no bound path shows.
import { describe, expect, it } from 'vitest';
import { sandboxMounts, type HostFs } from '../../../src/worker/tools/sandbox-mounts.ts';

const fakeFs = (): HostFs => {
  const dirs = new Set(['/usr', '/usr/src/app/.svc', '/srv/tools', '/srv/tools/keys', '/home/svc/.svc']);
  const files = new Set(['/etc/passwd', '/srv/tools/keys/worker.token']);
  // /opt/tools, the bind as the operator wrote it, is a symlink to /srv/tools.
  const real: Record<string, string> = { '/opt/tools': '/srv/tools', '/opt/tools/keys/worker.token': '/srv/tools/keys/worker.token' };
  return {
    kind: (p) => (dirs.has(p) ? 'dir' : files.has(p) ? 'file' : p in real ? 'symlink' : 'missing'),
    resolves: (p) => dirs.has(p) || files.has(p) || p in real,
    readlink: (p) => real[p],
    realpath: (p) => real[p] ?? p,
  };
};

describe('sandboxMounts with hidden paths', () => {
  it('covers a data directory under /usr with an empty read-only tmpfs, after every bind', () => {
    const { args } = sandboxMounts(['/opt/tools'], fakeFs(), ['/usr/src/app/.svc', '/home/svc/.svc', '/nowhere']);
    expect(args.slice(-4)).toEqual(['--tmpfs', '/usr/src/app/.svc', '--remount-ro', '/usr/src/app/.svc']);
    // /home/svc is bound nowhere, /nowhere does not exist: nothing for them.
    expect(args.join(' ')).not.toMatch(/home\/svc|nowhere/);
  });

  it('covers a secret file shown by a symlinked bind at its place inside, with /dev/null', () => {
    const { args } = sandboxMounts(['/opt/tools'], fakeFs(), ['/opt/tools/keys/worker.token']);
    expect(args.slice(-6)).toEqual(['--ro-bind', '/opt/tools', '/opt/tools', '--ro-bind', '/dev/null', '/opt/tools/keys/worker.token']);
  });

  it('adds nothing without hidden paths', () => {
    expect(sandboxMounts(['/opt/tools'], fakeFs()).args.slice(-3)).toEqual(['--ro-bind', '/opt/tools', '/opt/tools']);
  });
});
