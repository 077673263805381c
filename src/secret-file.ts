import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The secret in `file` (trimmed), or a new one from `make()` written there with mode 0600 (its
 * directory made 0755 if missing). Two processes creating it at once both get the one written
 * first ('wx'), never each their own.
 */
export async function readOrCreateSecretFile(file: string, make: () => string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  // 0o755: as root, the embedded PostgreSQL runs as another user that must reach this directory.
  await mkdir(dirname(file), { recursive: true, mode: 0o755 });
  const value = make();
  try {
    await writeFile(file, value + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
    return (await readFile(file, 'utf8')).trim();
  }
  return value;
}
