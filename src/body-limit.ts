import type { Config } from './config.ts';

/** Bodies above this are refused with 413 before parsing; batch intake has its own limit. */
export const BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * The largest request body the server (and the gateway in front of it) reads: 8 MiB, or the batch
 * intake's SVC_BATCH_MAX_BYTES when that is larger (its route refuses past its own limit).
 */
export function bodyLimitBytes(config: Pick<Config, 'SVC_BATCH_MAX_BYTES'>): number {
  return Math.max(BODY_LIMIT_BYTES, config.SVC_BATCH_MAX_BYTES);
}

/**
 * The longest path parameter the router lets through to a route, in characters once decoded
 * (`%2F` is one): fastify's default, 100, made a signal name of 101 to 128 characters a 414. The
 * longest one a route's own schema takes is a limit's `@<path>` (1000, src/api/limits.ts; a
 * signal name takes 128, a step 256, a keychain or credential name 200), so every value a schema
 * takes reaches it, and one shorter than this but beyond its schema is refused naming its field.
 * Beyond it: 414. The gateway routes with the same limit: with a shorter one a parameter between
 * the two missed its checked routes (a path-restricted retry, an MCP lifecycle action) and fell to
 * its /api/* catch-all, which the server then routed to the same route unchecked.
 */
export const MAX_PARAM_CHARS = 1000;
