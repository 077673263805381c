import { describe, expect, it } from 'vitest';
import { SCRAM_ITERATIONS, scramVerifier } from '../../../src/db/scram-verifier.ts';

// What PostgreSQL 18.4 stored for `CREATE ROLE v PASSWORD 'pencil'` (password_encryption = scram-sha-256).
const POSTGRES_SECRET = 'SCRAM-SHA-256$4096:YWfGTmzsZ+rMm/tJ605xdQ==$9PwKDQamvI22FZ/TsLL02mAn7DSMRlseOyMrvaeKxKc=:kUnZI7Wrq7R25g9cuZRj9NPDlSkMsyqZ+pIHKi9PDNw=';

describe('scramVerifier', () => {
  it("is PostgreSQL's own secret for the same password and salt", async () => {
    expect(await scramVerifier('pencil', Buffer.from('YWfGTmzsZ+rMm/tJ605xdQ==', 'base64'))).toBe(POSTGRES_SECRET);
  });

  it('salts with 16 fresh random bytes each time, at 4096 iterations', async () => {
    const [a, b] = await Promise.all([scramVerifier('pencil'), scramVerifier('pencil')]);
    expect(a).not.toBe(b);
    for (const secret of [a, b]) {
      const m = /^SCRAM-SHA-256\$(\d+):([A-Za-z0-9+/=]+)\$[A-Za-z0-9+/=]{44}:[A-Za-z0-9+/=]{44}$/.exec(secret);
      expect(m, secret).not.toBeNull();
      expect(Number(m?.[1])).toBe(SCRAM_ITERATIONS);
      expect(Buffer.from(m?.[2] ?? '', 'base64')).toHaveLength(16);
      expect(secret).not.toContain('pencil');
    }
  });

  it('refuses a non-ASCII password (PostgreSQL would SASLprep it first), without naming it', async () => {
    await expect(scramVerifier('pâte-secrète')).rejects.toThrow(/must be ASCII/);
    await expect(scramVerifier('pâte-secrète')).rejects.not.toThrow(/pâte/);
  });
});
