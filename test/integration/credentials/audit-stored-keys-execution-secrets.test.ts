// The start's check of its keys (checkStoredKeys) covers every sealed value a server opens: a live
// execution secret (a start's sealed `workload.access_token`, which a worker's mcp task exchanges
// for the token) sealed with a key the keyring lacks is named, as a credential's is. The check
// read credentials and the keychain only, so a server started with a key that could not open
// them and failed each mcp task that needed one. An expired secret is never opened: no key needed.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealAccessTokens } from '../../../actors/access-tokens.ts';
import { checkStoredKeys, MissingKeyError } from '../../../src/crypto/check-stored-keys.ts';
import { createKeyring, keyId } from '../../../src/crypto/keyring.ts';
import { executionSecretAad, seal } from '../../../src/crypto/seal.ts';
import { insertExecutionSecrets } from '../../../src/db/execution-secret.repo.ts';
import { createMigratedDatabase } from '../../helpers/database.ts';

let d: Awaited<ReturnType<typeof createMigratedDatabase>>;
beforeAll(async () => {
  d = await createMigratedDatabase();
});
afterAll(async () => {
  await d?.drop();
});

describe('the start check of stored keys and execution secrets', () => {
  it('names a live execution secret no key opens; an old key that opens it, or its expiry, lets the start go on', async () => {
    const keyA = randomBytes(32);
    const keyB = randomBytes(32);
    const keyC = randomBytes(32);
    const ringA = createKeyring(keyA, []);
    await sealAccessTokens({ db: d.db, keyring: ringA }, ['mcp-token-live']);
    // An expired one, sealed with a third key that no ring below holds.
    const handle = randomUUID();
    await insertExecutionSecrets(d.db, [{ handle, sealed: seal(createKeyring(keyC, []), 'mcp-token-old', executionSecretAad(handle)) }], -60);

    const err = await checkStoredKeys(d.db, createKeyring(keyB, []), 'SVC_ENCRYPTION_KEY').then(() => undefined, (e: unknown) => e);
    if (!(err instanceof MissingKeyError)) throw new Error(`expected a MissingKeyError, got ${String(err)}`);
    expect(err.missing).toEqual([{ kid: keyId(keyA), credentials: 0, keychain: 0, executionSecrets: 1 }]);
    expect(err.message).toContain(`stored data is sealed with key id ${keyId(keyA)} (1 execution secret), which neither SVC_ENCRYPTION_KEY (key id ${keyId(keyB)})`);
    expect(err.message).not.toContain('mcp-token');

    await expect(checkStoredKeys(d.db, createKeyring(keyB, [keyA]), 'SVC_ENCRYPTION_KEY')).resolves.toBeUndefined();
    await expect(checkStoredKeys(d.db, ringA, 'SVC_ENCRYPTION_KEY')).resolves.toBeUndefined();
  });
});
