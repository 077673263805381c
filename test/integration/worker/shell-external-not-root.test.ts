// SVC_SHELL_NETWORK=external on a worker that is not root (docs/operations.md, "The shell
// sandbox"): its task enters pasta's user namespace, where the worker's uid is root, so bwrap
// started there as root and kept every capability for the task: it ran as uid 0 and could mount a
// tmpfs of any size (`unshare -m`, then `mount -t tmpfs`), past SVC_SHELL_FILE_MB, in the machine's
// memory. The worker's shell path runs here as `nobody` (setpriv), as a worker of its own user does.
import { describe, expect, it } from 'vitest';
import { canRunAsNobody, NOBODY, shellAsNobody } from '../../helpers/shell-as-nobody.ts';

// What a task of such a worker is: its ids, its capabilities, and whether it can mount a file system.
const PROBE = 'id -u; id -g; grep CapEff /proc/self/status; unshare -m sh -c "mount -t tmpfs -o size=4g none /tmp && echo mounted" 2>/dev/null || echo refused';

describe('a shell task of a worker that is not root, with SVC_SHELL_NETWORK=external', () => {
  it.skipIf(!canRunAsNobody)("is the worker's user without capabilities, and cannot mount a file system", async () => {
    const { outcome } = await shellAsNobody(PROBE, 'external', async () => undefined);
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: `${NOBODY}\n${NOBODY}\nCapEff:\t0000000000000000\nrefused\n` } });
  }, 90_000);
});
