// The NKEY library itself (what the NATS client re-exports as `nkeys`): checking a seed does not
// load the client.
import { fromSeed } from '@nats-io/nkeys';

// The key logins of a `nats` credential: `creds`, the text of a `.creds` file as `nsc` writes it
// (a user JWT block and a user NKEY seed block, each between dashed lines), and `nkey`, a user
// seed. Their problems name the field and never quote it: it is a secret.

// A block: `-----BEGIN <NAME>-----`, its text, `------END <NAME>------`. Line breaks are not
// needed: a form's password input drops them from a pasted file. A JWT or seed never ends in '-'.
// Bounded repeats keep a long text of dashes or names from costing quadratic time.
const BLOCK = /-{3,20}\s{0,4}BEGIN ([A-Z ]{1,40}?)\s{0,4}-{3,20}([\s\S]{0,16384}?)-{3,20}\s{0,4}END \1\s{0,4}-{3,20}/g;
// A .creds file is about 1 KiB (a JWT with many permissions a few more).
const MAX_CREDS_LENGTH = 64 * 1024;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The user JWT and seed of a `.creds` text, or the problem of field `field` (the text never quoted). */
export function parseNatsCreds(text: string, field = 'creds'): { jwt: string; seed: string } | { problem: string } {
  if (text.length > MAX_CREDS_LENGTH) return { problem: `Field '${field}' is longer than a .creds file (${MAX_CREDS_LENGTH} characters at most)` };
  const blocks = [...text.matchAll(BLOCK)].map((m) => ({ name: m[1], text: m[2].trim() }));
  const jwt = blocks.find((b) => b.name.includes('JWT'))?.text;
  const seed = blocks.find((b) => b.name.includes('SEED'))?.text;
  if (jwt === undefined || seed === undefined) return { problem: `Field '${field}' must be the text of a .creds file: a user JWT block and a user NKEY seed block` };
  if (!JWT.test(jwt)) return { problem: `Field '${field}': its JWT block holds no JWT` };
  const seedProblem = userSeedProblem(seed);
  if (seedProblem !== null) return { problem: `Field '${field}': its seed block holds no NKEY user seed (SU…)${seedProblem}` };
  return { jwt, seed };
}

/** Why `seed` is not an NKEY user seed (SU…), naming `field`; null when it is one. */
export function natsUserSeedProblem(seed: string, field = 'nkey'): string | null {
  const problem = userSeedProblem(seed);
  return problem === null ? null : `Field '${field}' must be an NKEY user seed (SU…)${problem}`;
}

// '' or ': why', never quoting the text; null for a user seed.
function userSeedProblem(seed: string): string | null {
  const trimmed = seed.trim();
  if (/^U[A-Z2-7]{55}$/.test(trimmed)) return ": it is a user's public key";
  if (!trimmed.startsWith('SU')) return '';
  try {
    // Checks the encoding and the checksum, not only the prefix.
    return fromSeed(new TextEncoder().encode(trimmed)).getPublicKey().startsWith('U') ? null : '';
  } catch {
    return ': it does not decode';
  }
}
