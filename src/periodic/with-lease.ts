import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../db/db.ts';
import { releaseLease, renewLease, takeLease } from '../db/runtime.repo.ts';
import type { Logger } from '../log.ts';

const SERVER_ID = `${hostname()}-${process.pid}`;

export type LeaseTerms = {
  /** The lease row (`core.runtime`, `kind = 'lease'`): one holder at a time across servers. */
  name: string;
  /** How long a holder may keep it; a holder that dies blocks the others this long at most. */
  ttlSeconds: number;
  /** Skip unless the last taking was at least this long ago (one run per interval); null: no gap. */
  minGapSeconds: number | null;
  /**
   * Renew the lease this often while `work` runs (its end again `ttlSeconds` away), for work that
   * may outlast `ttlSeconds`: the TTL then bounds only how long a holder that died blocks the others.
   */
  renewEveryMs?: number;
};

/**
 * Runs `work` holding the lease `terms.name`, then gives it back; `{ ran: false }` without running
 * it when another holder has it (or took it within `minGapSeconds`). A release that fails is
 * logged: the lease then expires by itself.
 */
export async function withLease<T>(deps: { db: Db; log: Logger }, terms: LeaseTerms, work: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  const holder = `${SERVER_ID}-${randomUUID().slice(0, 8)}`;
  if (!(await takeLease(deps.db, { name: terms.name, holder, ttlSeconds: terms.ttlSeconds, minGapSeconds: terms.minGapSeconds }))) return { ran: false };
  const renewal = terms.renewEveryMs
    ? setInterval(() => {
        void renewLease(deps.db, { name: terms.name, holder, ttlSeconds: terms.ttlSeconds }).catch((err: unknown) =>
          deps.log.warn({ err: String(err), lease: terms.name }, 'could not renew a lease; the next renewal tries again'),
        );
      }, terms.renewEveryMs)
    : undefined;
  try {
    return { ran: true, value: await work() };
  } finally {
    clearInterval(renewal);
    await releaseLease(deps.db, terms.name, holder).catch((err: unknown) =>
      deps.log.warn({ err: String(err), lease: terms.name }, 'could not release a lease; it expires by itself'),
    );
  }
}
