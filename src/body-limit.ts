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
