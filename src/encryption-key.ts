import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError } from './config.ts';
import { readOrCreateSecretFile } from './secret-file.ts';

/** The sealing key (base64) and where it came from, for messages that must say which key is meant. */
export type EncryptionKey = { key: string; source: string };

/** The embedded key file; beside the embedded PostgreSQL's own directory. */
export const keyFilePath = (dataDir: string): string => join(resolve(dataDir), 'encryption.key');

/** True when the embedded PostgreSQL under `dataDir` has been initialised (it may hold sealed rows). */
export const embeddedDatabaseExists = (dataDir: string): boolean => existsSync(join(resolve(dataDir), 'pg', 'PG_VERSION'));

/**
 * The sealing key: SVC_ENCRYPTION_KEY when set; else, for the embedded default only, the key in
 * `<dataDir>/encryption.key`, generated (mode 0600) only for a data dir whose database does not
 * exist yet. Call it before the embedded database starts, so a brand-new data dir gets its key
 * first and a half-made data dir never lacks one.
 *
 * Refuses (throws) rather than invent a key that would leave stored rows unreadable: a database
 * URL with no key (the next server would lack it: a ConfigError, exit 78 as for any missing
 * setting), and an existing embedded database whose key file is gone (every credential in it is
 * sealed with the lost key).
 */
export async function resolveEncryptionKey(opts: { configured?: string; dataDir: string; embedded: boolean }): Promise<EncryptionKey> {
  if (opts.configured) return { key: opts.configured, source: 'SVC_ENCRYPTION_KEY' };
  if (!opts.embedded) {
    throw new ConfigError('SVC_ENCRYPTION_KEY is required when SVC_DATABASE_URL is set (base64 of 32 random bytes; `openssl rand -base64 32`)');
  }
  const file = keyFilePath(opts.dataDir);
  const source = `the key file ${file}`;
  if (existsSync(file)) return { key: (await readFile(file, 'utf8').catch((err: unknown) => Promise.reject(unusableDataDir(err, opts.dataDir)))).trim(), source };
  if (embeddedDatabaseExists(opts.dataDir)) {
    throw new Error(
      `${file} is missing but the database in ${join(resolve(opts.dataDir), 'pg')} exists, and the credentials and keychain entries in it are sealed with that key; ` +
        `restore the file from a backup (or set SVC_ENCRYPTION_KEY to the key it held). Nothing was changed; no new key was made`,
    );
  }
  // Made only here, for a data dir whose database does not exist yet (checked above).
  const key = await readOrCreateSecretFile(file, () => randomBytes(32).toString('base64')).catch((err: unknown) => Promise.reject(unusableDataDir(err, opts.dataDir)));
  return { key, source };
}

/**
 * The file system's refusal of the data directory (a file there, a file above it, no permission),
 * the first thing a start writes there, said of the setting: Node's words alone ("EEXIST: file
 * already exists, mkdir '/srv/svc'") named none.
 */
function unusableDataDir(err: unknown, dataDir: string): unknown {
  if (!(err instanceof Error && 'code' in err)) return err;
  return new ConfigError(`invalid SVC_DATA_DIR: ${dataDir}: the embedded default cannot keep its files there (${err.message})`);
}
