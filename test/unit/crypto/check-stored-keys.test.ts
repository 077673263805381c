import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { missingKeys, missingKeysMessage } from '../../../src/crypto/check-stored-keys.ts';
import { createKeyring } from '../../../src/crypto/keyring.ts';

const current = randomBytes(32);
const old = randomBytes(32);
const ring = createKeyring(current, [old]);
const [currentKid, oldKid] = ring.kids;

describe('missingKeys', () => {
  it('keeps only key ids the ring lacks, summing the three tables per key id', () => {
    const missing = missingKeys(
      ring,
      [
        { kid: currentKid, rows: 5 },
        { kid: 'bbbbbbbb', rows: 2 },
        { kid: oldKid, rows: 1 },
      ],
      [
        { kid: 'bbbbbbbb', rows: 1 },
        { kid: 'aaaaaaaa', rows: 3 },
        { kid: currentKid, rows: 9 },
      ],
      [
        { kid: 'cccccccc', rows: 2 },
        { kid: 'bbbbbbbb', rows: 1 },
        { kid: oldKid, rows: 6 },
      ],
    );
    expect(missing).toEqual([
      { kid: 'aaaaaaaa', credentials: 0, keychain: 3, executionSecrets: 0 },
      { kid: 'bbbbbbbb', credentials: 2, keychain: 1, executionSecrets: 1 },
      { kid: 'cccccccc', credentials: 0, keychain: 0, executionSecrets: 2 },
    ]);
  });

  it('is empty when every key id opens, and for empty tables', () => {
    expect(missingKeys(ring, [{ kid: oldKid, rows: 4 }], [{ kid: currentKid, rows: 1 }], [{ kid: oldKid, rows: 2 }])).toEqual([]);
    expect(missingKeys(ring, [], [], [])).toEqual([]);
  });
});

describe('missingKeysMessage', () => {
  it('one line naming the key id, the rows, and both remedies', () => {
    const text = missingKeysMessage([{ kid: 'bbbbbbbb', credentials: 2, keychain: 1, executionSecrets: 0 }], 'cccccccc', 'SVC_ENCRYPTION_KEY');
    expect(text).toBe(
      'stored data is sealed with key id bbbbbbbb (2 credentials, 1 keychain entry), which neither SVC_ENCRYPTION_KEY (key id cccccccc) ' +
        'nor SVC_ENCRYPTION_KEYS_OLD holds; restore that key as SVC_ENCRYPTION_KEY, or add that key to SVC_ENCRYPTION_KEYS_OLD ' +
        '(comma list) and run `svc rekey` to re-seal with the current key',
    );
    expect(text).not.toContain('\n');
  });

  it('lists several key ids with singular and plural counts', () => {
    const text = missingKeysMessage(
      [
        { kid: 'aaaaaaaa', credentials: 1, keychain: 0, executionSecrets: 0 },
        { kid: 'bbbbbbbb', credentials: 0, keychain: 4, executionSecrets: 0 },
        { kid: 'dddddddd', credentials: 0, keychain: 0, executionSecrets: 1 },
      ],
      'cccccccc',
      'the key file /d/encryption.key',
    );
    expect(text).toContain('sealed with key ids aaaaaaaa (1 credential), bbbbbbbb (4 keychain entries), dddddddd (1 execution secret), which neither the key file /d/encryption.key (key id cccccccc)');
    expect(text).toContain('restore those keys as SVC_ENCRYPTION_KEY, or add those keys to SVC_ENCRYPTION_KEYS_OLD');
  });
});
