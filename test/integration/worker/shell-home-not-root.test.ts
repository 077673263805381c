// A shell task's home is removed after it (docs/operations.md, "The shell sandbox"). A worker
// that is not root runs its tasks as its own user, and a task that took the rights of a directory
// in its home away (`chmod 000`) made it one its owner could not empty: the removal failed (EACCES,
// swallowed), and the home, with what the task wrote, stayed on the worker's disk for good, past
// the next worker's sweep too. The worker's shell path runs here as `nobody` (setpriv).
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { canRunAsNobody, shellAsNobody } from '../../helpers/shell-as-nobody.ts';

describe('the home of a shell task of a worker that is not root', () => {
  it.skipIf(!canRunAsNobody)('is removed after a task that locked a directory in it', async () => {
    const { outcome, after } = await shellAsNobody('mkdir -p d/e && echo data > d/e/f && chmod 000 d && chmod 500 . && echo locked', 'host', async (temp) =>
      (await readdir(temp, { recursive: true })).filter((path) => path.includes('svc-task-')),
    );
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: 'locked\n' } });
    expect(after).toEqual([]);
  }, 90_000);
});
