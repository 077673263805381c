// The kernel's keyrings are in no namespace: a process keeps its parent's session keyring across
// fork, exec and setuid, and holding it lets it read the keys in it whatever its uid. A worker
// started in a session with keys (a login shell's, a service's: Kerberos tickets, `keyctl padd …
// @s`) gave them to every sandboxed shell task, which read them (keyctl read). Tasks now get a
// seccomp filter that refuses add_key, request_key and keyctl. Here the worker's shell path
// (probeShellSandbox, runShell) runs in a process that joined a session keyring holding a key.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ensurePackage } from '../../../scripts/ensure-package.ts';

const run = promisify(execFile);
const checkout = resolve(import.meta.dirname, '../../..');
const SECRET = 'keyring-secret-of-the-worker';

// Python's ctypes makes the calls (x86_64 numbers: add_key 248, keyctl 250), as a task may.
const JOIN = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
if libc.syscall(250, 1, None) < 0: sys.exit('join: ' + os.strerror(ctypes.get_errno()))
if libc.syscall(248, b'user', b'worker-secret', sys.argv[1].encode(), len(sys.argv[1]), -3) < 0: sys.exit('add_key: ' + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])
`;
// The task: the session keyring's key ids (KEYCTL_READ of @s), then each key's payload.
const READ = `
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(4096)
n = libc.syscall(250, 11, -3, buf, 4096)
print('keyring', 'refused' if n < 0 else 'read')
for i in range(max(n, 0) // 4):
    m = libc.syscall(250, 11, struct.unpack('i', buf.raw[i * 4:i * 4 + 4])[0], buf, 4096)
    print(buf.raw[:max(m, 0)].decode())
`;
const script = (network: string) => `
import { probeShellSandbox } from ${JSON.stringify(`${checkout}/src/worker/tools/probe-shell-sandbox.ts`)};
import { runShell } from ${JSON.stringify(`${checkout}/src/worker/tools/shell.ts`)};
import { DEFAULT_SHELL_SETTINGS } from ${JSON.stringify(`${checkout}/src/worker/tools/shell-settings.ts`)};
const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, network: ${JSON.stringify(network)} });
if (host.unavailable) throw new Error(host.unavailable);
const outcome = await runShell(host, { command: 'python3 -c "$READ"', env: { READ: ${JSON.stringify(READ)} } }, AbortSignal.timeout(30000));
process.stdout.write(JSON.stringify(outcome));
process.exit(0);
`;

describe('a sandboxed shell task of a worker whose session keyring holds a key', () => {
  it.skipIf(process.arch !== 'x64')('cannot read it, with any network', async () => {
    // The calls are made from Python's ctypes, in the test and in the task: Debian's python3.
    ensurePackage('python3', 'python3', "the keyring test's system calls (ctypes)");
    // A temp directory of its own: what the process leaves there at its exit goes with it.
    const temp = await mkdtemp(join(tmpdir(), 'svc-keyring-'));
    try {
      // A root worker's task users pass through it to their homes (docs/operations.md, User).
      await chmod(temp, 0o711);
      for (const network of ['host', 'external', 'none']) {
        const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: temp };
        const { stdout } = await run('python3', ['-c', JOIN, SECRET, process.execPath, '--input-type=module', '-e', script(network)], { cwd: '/', env, timeout: 60_000 });
        const outcome: unknown = JSON.parse(stdout);
        expect(JSON.stringify(outcome), network).not.toContain(SECRET);
        expect(outcome, network).toMatchObject({ status: 'ok', data: { stdout: 'keyring refused\n' } });
      }
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }, 120_000);
});
