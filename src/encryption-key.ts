import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/**
 * The sealing key: SVC_ENCRYPTION_KEY when set; else, for the embedded default only, a key
 * generated once into `<dataDir>/encryption.key` (mode 0600). A server pointed at a database
 * URL with no key refuses to start rather than invent a key that the next server lacks.
 */
export async function resolveEncryptionKey(opts: { configured?: string; dataDir: string; embedded: boolean }): Promise<string> {
  if (opts.configured) return opts.configured;
  if (!opts.embedded) {
    throw new Error('SVC_ENCRYPTION_KEY is required when SVC_DATABASE_URL is set (base64 of 32 random bytes; `openssl rand -base64 32`)');
  }
  const dir = resolve(opts.dataDir);
  const file = join(dir, 'encryption.key');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const key = randomBytes(32).toString('base64');
  await writeFile(file, key + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}
