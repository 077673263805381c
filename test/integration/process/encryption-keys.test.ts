// The encryption key at start, as real processes: a key that cannot open the stored rows is
// refused with one line; a lost embedded key file is refused, not replaced; `svc rekey` rotates.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyId } from '../../../src/crypto/keyring.ts';
import { freePort } from '../../helpers/ports.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForHealth, withTimeout, type SvcProcess } from '../../helpers/process.ts';

const CREDENTIAL_SECRET = 'proc-cred-secret-7f3a';
const TOKEN_SECRET = 'proc-kc-token-91bd';
const PLAYBOOK = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: keys, path: tests/keys }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-keys-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as another user that must reach the directory
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const b64 = (key: Buffer): string => key.toString('base64');

/** Starts `svc server` and waits until it answers; the caller stops it with `stop`. */
async function serve(env: Record<string, string>): Promise<{ base: string; p: SvcProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const p = spawnSvc(['server'], { ...env, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' });
  try {
    await Promise.race([
      waitForHealth(`${base}/api/health`, 30_000),
      p.exited.then((code) => Promise.reject(new Error(`server exited ${code}: ${p.output()}`))),
    ]);
  } catch (err) {
    p.kill('SIGKILL');
    throw err;
  }
  return {
    base,
    p,
    async stop() {
      p.kill('SIGTERM');
      expect(await withTimeout(p.exited, 20_000, 'server stop')).toBe(0);
    },
  };
}

/** Runs `svc <args>` to its end; its exit code and everything it printed. */
async function runToExit(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const p = spawnSvc(args, env);
  try {
    const code = await withTimeout(p.exited, 30_000, `svc ${args.join(' ')}`);
    return { code, output: p.output() };
  } catch (err) {
    // Still running (e.g. a server that should have refused): stop it so it does not outlive the test.
    p.kill('SIGTERM');
    await withTimeout(p.exited, 20_000, 'stop').catch(() => p.kill('SIGKILL'));
    throw err;
  }
}

/** A credential and a keychain entry, both holding a secret, stored through the API. */
async function storeSecrets(base: string): Promise<number> {
  const reg = await http(base, 'POST', '/api/catalog/playbook', { content: PLAYBOOK });
  expect(reg.status).toBe(201);
  const cred = await http(base, 'POST', '/api/credentials', { name: 'keys_auth', type: 'basic', data: { username: 'u', password: CREDENTIAL_SECRET } });
  expect(cred.status).toBe(201);
  const kc = await http(base, 'POST', `/api/keychain/${reg.body.catalog_id}/tok`, { token_data: { access_token: TOKEN_SECRET }, credential_type: 'bearer' });
  expect(kc.status).toBe(201);
  return reg.body.catalog_id;
}

async function expectSecretsOpen(base: string, catalogId: number): Promise<void> {
  const cred = await http(base, 'GET', '/api/credentials/keys_auth?include_data=true');
  expect(cred.status).toBe(200);
  expect(cred.body.data).toEqual({ username: 'u', password: CREDENTIAL_SECRET });
  const kc = await http(base, 'GET', `/api/keychain/${catalogId}/tok`);
  expect(kc.body).toMatchObject({ status: 'success', token_data: { access_token: TOKEN_SECRET } });
}

/** The refusal is one line: no stack trace, no key material, no secret. */
function expectOneCleanLine(output: string, ...keys: Buffer[]): void {
  const lines = output.trim().split('\n');
  expect(lines, output).toHaveLength(1);
  expect(output).not.toMatch(/\n\s+at /);
  for (const key of keys) {
    expect(output).not.toContain(b64(key));
    expect(output).not.toContain(key.toString('hex'));
  }
  expect(output).not.toContain(CREDENTIAL_SECRET);
  expect(output).not.toContain(TOKEN_SECRET);
}

function postgresRunningOn(dataDir: string): boolean {
  const pidFile = join(dataDir, 'pg', 'postmaster.pid');
  return existsSync(pidFile);
}

describe('a key that cannot open the stored rows (database URL)', () => {
  it('refuses to start naming the key id and the rows; SVC_ENCRYPTION_KEYS_OLD opens them; svc rekey rotates so the new key alone opens them', async () => {
    const t = await createTestDatabase();
    const keyA = randomBytes(32);
    const keyB = randomBytes(32);
    const [kidA, kidB] = [keyId(keyA), keyId(keyB)];
    const db = { SVC_DATABASE_URL: t.url };
    try {
      const first = await serve({ ...db, SVC_ENCRYPTION_KEY: b64(keyA) });
      const catalogId = await storeSecrets(first.base);
      // A start's access_token is sealed too (core.execution_secret), until a worker's mcp task opens it.
      expect((await http(first.base, 'POST', '/api/run/playbook', { path: 'tests/keys', payload: { access_token: TOKEN_SECRET } })).status).toBe(200);
      await first.stop();

      // Only the new key: refused before listening, one line saying what is missing and what to do.
      const refused = await runToExit(['server'], { ...db, SVC_ENCRYPTION_KEY: b64(keyB), SVC_PORT: String(await freePort()) });
      expect(refused.code).not.toBe(0);
      expect(refused.output).toContain(
        `svc server: stored data is sealed with key id ${kidA} (1 credential, 1 keychain entry, 1 execution secret), which neither SVC_ENCRYPTION_KEY (key id ${kidB}) nor SVC_ENCRYPTION_KEYS_OLD holds;`,
      );
      expect(refused.output).toContain('restore that key as SVC_ENCRYPTION_KEY, or add that key to SVC_ENCRYPTION_KEYS_OLD');
      expectOneCleanLine(refused.output, keyA, keyB);

      // The new key with the old one still opening: starts, and both rows open.
      const both = await serve({ ...db, SVC_ENCRYPTION_KEY: b64(keyB), SVC_ENCRYPTION_KEYS_OLD: b64(keyA) });
      await expectSecretsOpen(both.base, catalogId);
      await both.stop();

      // `svc rekey` as a process re-seals every row with the new key…
      const rekey = await runToExit(['rekey'], { ...db, SVC_ENCRYPTION_KEY: b64(keyB), SVC_ENCRYPTION_KEYS_OLD: b64(keyA) });
      expect(rekey.code, rekey.output).toBe(0);
      expect(rekey.output).toContain(`current key id ${kidB}; keys that open: ${kidB}, ${kidA}`);
      expect(rekey.output).toContain('credentials: 1 re-sealed, 0 failed, 0 already current (of 1)');
      expect(rekey.output).toContain('keychain: 1 re-sealed, 0 failed, 0 already current (of 1)');
      expect(rekey.output).toContain('execution secrets: 1 re-sealed, 0 failed, 0 already current (of 1)');
      expect(rekey.output).not.toContain(CREDENTIAL_SECRET);
      expect(rekey.output).not.toContain(TOKEN_SECRET);

      // …so a server with only the new key starts and opens them.
      const onlyB = await serve({ ...db, SVC_ENCRYPTION_KEY: b64(keyB) });
      await expectSecretsOpen(onlyB.base, catalogId);
      await onlyB.stop();
    } finally {
      await t.drop();
    }
  }, 120_000);
});

describe('the embedded key file', () => {
  it('is made with mode 0600 for a new data dir; a lost or wrong one on an existing data dir is refused and nothing is changed', async () => {
    const dataDir = join(dir, 'embedded');
    const keyFile = join(dataDir, 'encryption.key');
    const env = { SVC_DATA_DIR: dataDir };

    const first = await serve(env);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const original = await readFile(keyFile, 'utf8');
    const catalogId = await storeSecrets(first.base);
    await first.stop();

    // Lost key file: refused before PostgreSQL starts; no new key file appears.
    await rename(keyFile, `${keyFile}.bak`);
    const lost = await runToExit(['server'], { ...env, SVC_PORT: String(await freePort()) });
    expect(lost.code).not.toBe(0);
    expect(lost.output).toContain(`svc server: ${keyFile} is missing but the database in ${join(dataDir, 'pg')} exists`);
    expect(lost.output).toContain('restore the file from a backup (or set SVC_ENCRYPTION_KEY to the key it held)');
    expectOneCleanLine(lost.output);
    expect(existsSync(keyFile)).toBe(false);
    expect(postgresRunningOn(dataDir)).toBe(false);

    // A different key in the file: the database starts, the key ids are checked, refused, stopped.
    const wrong = randomBytes(32);
    await writeFile(keyFile, `${b64(wrong)}\n`, { mode: 0o600 });
    const mismatch = await runToExit(['server'], { ...env, SVC_PORT: String(await freePort()) });
    expect(mismatch.code).not.toBe(0);
    expect(mismatch.output).toContain(
      `stored data is sealed with key id ${keyId(Buffer.from(original.trim(), 'base64'))} (1 credential, 1 keychain entry), which neither the key file ${keyFile} (key id ${keyId(wrong)})`,
    );
    expectOneCleanLine(mismatch.output, wrong);
    expect(postgresRunningOn(dataDir)).toBe(false);

    // The key restored: it starts and the data is as it was.
    await rm(keyFile);
    await rename(`${keyFile}.bak`, keyFile);
    const restored = await serve(env);
    await expectSecretsOpen(restored.base, catalogId);
    await restored.stop();
    expect(await readFile(keyFile, 'utf8')).toBe(original);
  }, 120_000);
});
