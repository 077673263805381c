// SVC_SHELL_NETWORK=external on a worker that is not root (docs/operations.md, "The shell
// sandbox"): its task enters pasta's user namespace, where the worker's uid is root, so bwrap
// started there as root and kept every capability for the task: it ran as uid 0 and could mount a
// tmpfs of any size (`unshare -m`, then `mount -t tmpfs`), past SVC_SHELL_FILE_MB, in the machine's
// memory. The worker's shell path runs here as `nobody` (setpriv), as a worker of its own user does.
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const checkout = resolve(import.meta.dirname, '../../..');
const NOBODY = 65534;

// What a task of such a worker is: its ids, its capabilities, and whether it can mount a file system.
const PROBE = 'id -u; id -g; grep CapEff /proc/self/status; unshare -m sh -c "mount -t tmpfs -o size=4g none /tmp && echo mounted" 2>/dev/null || echo refused';

// Runs PROBE through probeShellSandbox and runShell, as the worker does, in a process of `nobody`'s.
const script = `
import { probeShellSandbox } from ${JSON.stringify(`${checkout}/src/worker/tools/probe-shell-sandbox.ts`)};
import { runShell } from ${JSON.stringify(`${checkout}/src/worker/tools/shell.ts`)};
import { DEFAULT_SHELL_SETTINGS } from ${JSON.stringify(`${checkout}/src/worker/tools/shell-settings.ts`)};
const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, network: 'external' });
if (host.unavailable) throw new Error(host.unavailable);
const outcome = await runShell(host, { command: ${JSON.stringify(PROBE)}, env: {} }, AbortSignal.timeout(30000));
process.stdout.write(JSON.stringify(outcome));
process.exit(0);
`;

describe('a shell task of a worker that is not root, with SVC_SHELL_NETWORK=external', () => {
  // Only root can start a process as another user here; CI runs as root.
  it.skipIf(process.getuid?.() !== 0)('is the worker\'s user without capabilities, and cannot mount a file system', async () => {
    // A temp directory of its own: what the worker leaves there goes with it.
    const temp = await mkdtemp(join(tmpdir(), 'svc-not-root-'));
    try {
      await chown(temp, NOBODY, NOBODY);
      const { stdout } = await run(
        'setpriv',
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', process.execPath, '--input-type=module', '-e', script],
        { cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: temp, TMPDIR: temp }, timeout: 60_000 },
      );
      const outcome: unknown = JSON.parse(stdout);
      expect(outcome).toMatchObject({ status: 'ok', data: { stdout: `${NOBODY}\n${NOBODY}\nCapEff:\t0000000000000000\nrefused\n` } });
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }, 90_000);
});
