import { ConfigError, MAX_WORKER_CONCURRENCY } from '../config.ts';
import { UsageError } from './usage-error.ts';

/** `svc worker --help`: its flags, beside the one this file reads. */
export const WORKER_USAGE = `svc worker [--server URL] [--concurrency N]

  --server URL     the server whose commands it claims (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)
  --concurrency N  commands it runs at once, 1 to ${MAX_WORKER_CONCURRENCY} (default: $SVC_WORKER_CONCURRENCY, else 4)`;

/**
 * The slots of `svc worker`: `--concurrency N` when given (digits only, 1 to
 * MAX_WORKER_CONCURRENCY, as the variable: Number() took 0x10 and 1e3), else
 * SVC_WORKER_CONCURRENCY, whose 0 (no in-process workers, for `svc start`) names no pool a worker
 * could be: a ConfigError naming the variable (exit 78), not a usage error about a flag not given.
 */
export function workerConcurrency(flag: string | undefined, configured: number): number {
  const expects = `an integer from 1 to ${MAX_WORKER_CONCURRENCY}`;
  if (flag === undefined) {
    if (configured < 1) throw new ConfigError(`invalid SVC_WORKER_CONCURRENCY: svc worker expects ${expects} (got ${configured}; 0 means no in-process workers, for svc start)`);
    return configured;
  }
  const n = /^\d+$/.test(flag.trim()) ? Number(flag) : NaN;
  if (!(n >= 1 && n <= MAX_WORKER_CONCURRENCY)) throw new UsageError(`--concurrency expects ${expects}, got ${JSON.stringify(flag)}`);
  return n;
}
