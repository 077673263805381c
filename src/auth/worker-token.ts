// The worker token: the one credential worker routes take (claims, reports, pool registry).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError } from '../config.ts';
import { readOrCreateSecretFile } from '../secret-file.ts';

/** The embedded default's worker token file, beside its encryption.key. */
export const workerTokenFilePath = (dataDir: string): string => join(resolve(dataDir), 'worker.token');

/**
 * The server's worker token: SVC_WORKER_TOKEN when set; else, for the embedded default only, the
 * one in `<dataDir>/worker.token` (made on first start, mode 0600), which `svc worker` on this
 * machine reads too. A server with a database URL and no token refuses (ConfigError): its remote
 * workers need to be told the token, so it is never invented.
 */
export async function resolveWorkerToken(opts: { configured?: string; dataDir: string; embedded: boolean }): Promise<string> {
  if (opts.configured) return opts.configured;
  if (!opts.embedded) {
    throw new ConfigError('SVC_WORKER_TOKEN is required when SVC_DATABASE_URL is set (the token workers present; `openssl rand -base64 32`, given to server and workers)');
  }
  return readOrCreateSecretFile(workerTokenFilePath(opts.dataDir), () => randomBytes(32).toString('base64url'));
}

/**
 * What `svc worker` presents: SVC_WORKER_TOKEN, else the file an embedded server made in
 * SVC_DATA_DIR. Throws ConfigError naming the variable when there is neither.
 */
export async function readWorkerToken(opts: { configured?: string; dataDir: string }): Promise<string> {
  if (opts.configured) return opts.configured;
  const file = workerTokenFilePath(opts.dataDir);
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  throw new ConfigError(`SVC_WORKER_TOKEN is required (the server's worker token); no ${file} from an embedded server either`);
}
