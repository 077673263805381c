// SVC_SHELL_NETWORK=external on a worker that is not root and has no nsenter: each task runs under
// pasta of its own, as root of pasta's user namespace, and bwrap kept every capability for it (the
// fix for namespaces made ahead dropped them on the nsenter path only): the task saw id -u 0,
// CapEff 000001ffffffffff, and mounted a 4 GiB tmpfs past SVC_SHELL_FILE_MB. Here the worker's own
// shell path, as nobody, with the host the probe gives where nsenter is missing.
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { canRunAsNobody, NOBODY } from '../../helpers/shell-as-nobody.ts';

const run = promisify(execFile);
const checkout = resolve(import.meta.dirname, '../../..');
// What a task is: its ids, its capabilities, whether it can mount a file system; and that it has a network.
const PROBE = 'id -u; id -g; grep CapEff /proc/self/status; unshare -m sh -c "mount -t tmpfs -o size=4g none /tmp && echo mounted" 2>/dev/null || echo refused; ip -o link | grep -c -v " lo:"';

const script = `
import { probeShellSandbox } from ${JSON.stringify(`${checkout}/src/worker/tools/probe-shell-sandbox.ts`)};
import { runShell } from ${JSON.stringify(`${checkout}/src/worker/tools/shell.ts`)};
import { DEFAULT_SHELL_SETTINGS } from ${JSON.stringify(`${checkout}/src/worker/tools/shell-settings.ts`)};
const probed = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, network: 'external' });
if (probed.unavailable) throw new Error(probed.unavailable);
// A machine without util-linux's nsenter: the probe finds none, and each task starts pasta of its own.
const host = { ...probed, nsenter: undefined };
const outcome = await runShell(host, { command: ${JSON.stringify(PROBE)}, env: {} }, AbortSignal.timeout(30000));
process.stdout.write(JSON.stringify(outcome));
process.exit(0);
`;

describe('a shell task of a worker not root, SVC_SHELL_NETWORK=external, under pasta of its own (no nsenter)', () => {
  it.skipIf(!canRunAsNobody)("is the worker's user without capabilities, cannot mount, and has pasta's network", async () => {
    const temp = await mkdtemp(join(tmpdir(), 'svc-pasta-own-'));
    try {
      await chown(temp, NOBODY, NOBODY);
      const { stdout } = await run(
        'setpriv',
        [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', process.execPath, '--input-type=module', '-e', script],
        { cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: temp, TMPDIR: temp }, timeout: 60_000 },
      );
      const outcome: unknown = JSON.parse(stdout);
      // One interface beside lo: pasta's tap, so the task did run in pasta's namespace.
      expect(outcome).toMatchObject({ status: 'ok', data: { stdout: `${NOBODY}\n${NOBODY}\nCapEff:\t0000000000000000\nrefused\n1\n` } });
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }, 90_000);
});
