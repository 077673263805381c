import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Removes `path` and all under it, as `rm -rf` would, also where what it holds took its owner's
 * permissions away: a task of a worker that is not root writes its home as the worker's user and
 * can `chmod 000` a directory there, which the owner then cannot read or empty (EACCES), so its
 * home, and what it wrote there, stayed on the worker's disk for good. Such directories are given
 * their owner's rights back, symlinks never followed, and the removal is tried again.
 */
export async function removeTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true, maxRetries: 2 });
  } catch {
    await openDirectories(path);
    await rm(path, { recursive: true, force: true, maxRetries: 2 });
  }
}

// Gives every directory under `path` (itself included) rwx for its owner; a symlink is left as it
// is (chmod would follow it out of the tree), and what cannot be changed is left to rm's error.
async function openDirectories(path: string): Promise<void> {
  const stat = await lstat(path).catch(() => undefined);
  if (!stat?.isDirectory()) return;
  await chmod(path, (stat.mode & 0o7777) | 0o700).catch(() => {});
  const names = await readdir(path).catch((): string[] => []);
  for (const name of names) await openDirectories(join(path, name));
}
