import { createHash, createHmac, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

/** PBKDF2 rounds of the secret: PostgreSQL's own default (scram_iterations). */
export const SCRAM_ITERATIONS = 4096;
// As PostgreSQL's pg_fe_scram_build_secret: 16 random bytes of salt, SHA-256 keys of 32 bytes.
const SCRAM_SALT_BYTES = 16;
const SCRAM_KEY_BYTES = 32;
const derive = promisify(pbkdf2);

// PostgreSQL runs the password through SASLprep first; on ASCII that leaves it as it is (control
// characters make SASLprep fail, and PostgreSQL then uses the raw bytes too). Our passwords are
// base64url; anything else would need SASLprep, which this does not do.
const ASCII = /^[\x00-\x7f]*$/;

/**
 * The SCRAM-SHA-256 secret of `password` (RFC 5802/7677), as PostgreSQL stores it and accepts in
 * place of the password in CREATE/ALTER ROLE … PASSWORD: the password itself never reaches the
 * server. `salt` defaults to 16 random bytes. Throws on a non-ASCII password (no SASLprep here).
 */
export async function scramVerifier(password: string, salt: Buffer = randomBytes(SCRAM_SALT_BYTES), iterations = SCRAM_ITERATIONS): Promise<string> {
  if (!ASCII.test(password)) throw new Error('a role password must be ASCII: its SCRAM secret is computed without SASLprep');
  const salted = await derive(password, salt, iterations, SCRAM_KEY_BYTES, 'sha256');
  const hmac = (text: string) => createHmac('sha256', salted).update(text).digest();
  const storedKey = createHash('sha256').update(hmac('Client Key')).digest();
  const serverKey = hmac('Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
