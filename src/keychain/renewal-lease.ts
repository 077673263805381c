/**
 * How long a keychain renewal lease holds (src/api/keychain-renewal.ts): longer than a token
 * request may take (30 s, src/worker/keychain-http.ts), so a slow holder keeps it, and a holder
 * that died frees the key after it. A waiting worker waits this long (and a little) at most.
 */
export const RENEWAL_LEASE_SECONDS = 45;
