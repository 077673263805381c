import type { Role } from './roles.ts';

/**
 * Who made a request, as the auth hook established it; recorded as `requested_by` on the events
 * the request writes, so it never holds a credential. `via` says how it was established: `local`
 * (SVC_AUTH=none, loopback only), `token` (an API token; `sub` is its name), `gateway` (an
 * assertion signed by the gateway), `worker` (the worker token; no role).
 */
export type Identity = Readonly<{ sub: string; role: Role | null; via: 'local' | 'token' | 'gateway' | 'worker' }>;
