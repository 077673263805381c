import { parseArgs } from 'node:util';
import { renewConfigAad } from './api/keychain.ts';
import { loadConfig } from './config.ts';
import { parseKeyringFromEnv, type Keyring } from './crypto/keyring.ts';
import { credentialAad, executionSecretAad, keychainAad, open, seal, SealError } from './crypto/seal.ts';
import { countCredentialKeys, lockCredentialsToRekey, setCredentialCiphertext } from './db/credential.repo.ts';
import { Db } from './db/db.ts';
import { countKeychainKeys, lockKeychainToRekey, setKeychainCiphertext } from './db/keychain.repo.ts';
import { countExecutionSecretKeys, lockExecutionSecretsToRekey, setExecutionSecretCiphertext } from './db/execution-secret.repo.ts';
import { resolveEncryptionKey } from './encryption-key.ts';
import { createLogger } from './log.ts';
import { openDatabase } from './db/open-database.ts';
import { processEnvironment } from './secret-environment.ts';
import { UsageError } from './cli/usage-error.ts';

/** Rows re-sealed per transaction: short transactions keep row locks brief for a running server. */
export const REKEY_BATCH_ROWS = 200;

export type RekeyTally = {
  /** Rows in the table. */
  total: number;
  /** Rows sealed with another key when the run started. */
  stale: number;
  rekeyed: number;
  /** Rows no configured key opens (or bound to another row); left as they are. */
  failed: number;
};

/** `executionSecrets`: the sealed `workload.access_token`s of recent starts (actors/access-tokens.ts), live ones only. */
export type RekeyReport = { currentKid: string; credentials: RekeyTally; keychain: RekeyTally; executionSecrets: RekeyTally; failures: string[] };

export type RekeyOptions = { batchSize?: number; dryRun?: boolean; progress?: (line: string) => void };

/** Opens with any ring key and seals with the current one; SealError passes through, nothing else is caught. */
function reseal(keyring: Keyring, sealed: string, aad: string): string {
  return seal(keyring, open(keyring, sealed, aad), aad);
}

/**
 * Re-seals every credential, keychain and live execution secret row whose key id is not `keyring.currentKid`, in
 * batches of `batchSize`, each batch one transaction with its rows locked. Rows no ring key
 * opens are counted and reported by name, never by content, and left untouched.
 */
export async function rekeyAll(db: Db, keyring: Keyring, opts: RekeyOptions = {}): Promise<RekeyReport> {
  const batchSize = opts.batchSize ?? REKEY_BATCH_ROWS;
  const progress = opts.progress ?? (() => {});
  const kid = keyring.currentKid;
  const cred = await countCredentialKeys(db, kid);
  const chain = await countKeychainKeys(db, kid);
  const handles = await countExecutionSecretKeys(db, kid);
  const report: RekeyReport = {
    currentKid: kid,
    credentials: { ...cred, rekeyed: 0, failed: 0 },
    keychain: { ...chain, rekeyed: 0, failed: 0 },
    executionSecrets: { ...handles, rekeyed: 0, failed: 0 },
    failures: [],
  };
  if (opts.dryRun) return report;

  for (let afterId = 0; ; ) {
    const batch = await db.tx(async (q) => {
      const rows = await lockCredentialsToRekey(q, kid, afterId, batchSize);
      let rekeyed = 0;
      const failures: string[] = [];
      for (const row of rows) {
        try {
          await setCredentialCiphertext(q, row.id, reseal(keyring, row.data_encrypted, credentialAad(row.name)));
          rekeyed++;
        } catch (err) {
          if (!(err instanceof SealError)) throw err;
          failures.push(`credential '${row.name}' (id ${row.id}): ${err.message}`);
        }
      }
      return { lastId: rows.at(-1)?.id, rekeyed, failures };
    });
    if (batch.lastId === undefined) break;
    afterId = batch.lastId;
    report.credentials.rekeyed += batch.rekeyed;
    report.credentials.failed += batch.failures.length;
    report.failures.push(...batch.failures);
    progress(`credentials: ${report.credentials.rekeyed} re-sealed, ${report.credentials.failed} failed so far`);
  }

  for (let afterKey = ''; ; ) {
    const batch = await db.tx(async (q) => {
      const rows = await lockKeychainToRekey(q, kid, afterKey, batchSize);
      let rekeyed = 0;
      const failures: string[] = [];
      for (const row of rows) {
        try {
          const data = reseal(keyring, row.data_encrypted, keychainAad(row.cache_key));
          const renew = typeof row.renew_config === 'string' ? reseal(keyring, row.renew_config, renewConfigAad(row.cache_key)) : row.renew_config;
          await setKeychainCiphertext(q, row.cache_key, data, renew);
          rekeyed++;
        } catch (err) {
          if (!(err instanceof SealError)) throw err;
          failures.push(`keychain '${row.cache_key}': ${err.message}`);
        }
      }
      return { lastKey: rows.at(-1)?.cache_key, rekeyed, failures };
    });
    if (batch.lastKey === undefined) break;
    afterKey = batch.lastKey;
    report.keychain.rekeyed += batch.rekeyed;
    report.keychain.failed += batch.failures.length;
    report.failures.push(...batch.failures);
    progress(`keychain: ${report.keychain.rekeyed} re-sealed, ${report.keychain.failed} failed so far`);
  }

  // A running or retried mcp task exchanges its handle after the old key is dropped: these too.
  for (let afterHandle = '00000000-0000-0000-0000-000000000000'; ; ) {
    const batch = await db.tx(async (q) => {
      const rows = await lockExecutionSecretsToRekey(q, kid, afterHandle, batchSize);
      let rekeyed = 0;
      const failures: string[] = [];
      for (const row of rows) {
        try {
          await setExecutionSecretCiphertext(q, row.handle, reseal(keyring, row.sealed, executionSecretAad(row.handle)));
          rekeyed++;
        } catch (err) {
          if (!(err instanceof SealError)) throw err;
          failures.push(`execution secret ${row.handle}: ${err.message}`);
        }
      }
      return { lastHandle: rows.at(-1)?.handle, rekeyed, failures };
    });
    if (batch.lastHandle === undefined) break;
    afterHandle = batch.lastHandle;
    report.executionSecrets.rekeyed += batch.rekeyed;
    report.executionSecrets.failed += batch.failures.length;
    report.failures.push(...batch.failures);
    progress(`execution secrets: ${report.executionSecrets.rekeyed} re-sealed, ${report.executionSecrets.failed} failed so far`);
  }
  return report;
}

const tallyLine = (what: string, t: RekeyTally, dryRun: boolean): string =>
  dryRun
    ? `${what}: ${t.stale} of ${t.total} rows need re-sealing`
    : `${what}: ${t.rekeyed} re-sealed, ${t.failed} failed, ${t.total - t.stale} already current (of ${t.total})`;

/**
 * `svc rekey [--batch-size N] [--dry-run] [--json]`: the database as `svc migrate` finds it, the
 * keyring from SVC_ENCRYPTION_KEY (+ SVC_ENCRYPTION_KEYS_OLD). Exit 1 when some row could not be
 * re-sealed. `--json`: the tallies as one object on `out`, the progress on `err`.
 */
export async function rekeyCommand(
  argv: string[],
  env: Readonly<Record<string, string | undefined>> = processEnvironment(),
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  err: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { 'batch-size': { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } }, strict: true });
  const json = values.json ?? false;
  // With --json, stdout holds only the answer: the progress lines go to stderr.
  const say = json ? err : out;
  const batchSize = values['batch-size'] === undefined ? REKEY_BATCH_ROWS : Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new UsageError(`--batch-size expects an integer >= 1, got ${JSON.stringify(values['batch-size'])}`);
  const dryRun = values['dry-run'] ?? false;

  const config = loadConfig(env);
  const log = createLogger(config.SVC_LOG_LEVEL);
  // Before the database starts: the embedded default refuses a lost key file rather than make a new one.
  const key = await resolveEncryptionKey({ configured: config.SVC_ENCRYPTION_KEY, dataDir: config.SVC_DATA_DIR, embedded: !config.SVC_DATABASE_URL });
  const keyring = parseKeyringFromEnv(key.key, config.SVC_ENCRYPTION_KEYS_OLD, key.source);
  const database = await openDatabase(config, log);
  const db = new Db(database.url, 2);
  try {
    say(`current key id ${keyring.currentKid}; keys that open: ${keyring.kids.join(', ')}${dryRun ? ' (dry run)' : ''}`);
    const report = await rekeyAll(db, keyring, { batchSize, dryRun, progress: say });
    if (json) {
      out(JSON.stringify({ current_kid: report.currentKid, kids: keyring.kids, dry_run: dryRun, credentials: report.credentials, keychain: report.keychain, execution_secrets: report.executionSecrets, failures: report.failures }));
    } else {
      out(tallyLine('credentials', report.credentials, dryRun));
      out(tallyLine('keychain', report.keychain, dryRun));
      // Only where MCP starts carried an access_token: most databases have none.
      if (report.executionSecrets.total > 0) out(tallyLine('execution secrets', report.executionSecrets, dryRun));
      for (const failure of report.failures) out(`cannot re-seal ${failure}`);
    }
    return report.failures.length > 0 ? 1 : 0;
  } finally {
    await db.close();
    await database.embedded?.stop();
  }
}
