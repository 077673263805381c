// The gateway's one periodic job (src/gateway/gateway.ts starts it where a gateway runs): expired
// sessions and logins in progress are deleted. Expiry itself is judged when a row is read, so the
// sweep only keeps the tables small; it needs no lease (a gateway's database role reaches only its
// own tables), as sweeps on many gateways skip the rows another holds and delete nothing twice.
import type { Db } from '../db/db.ts';
import { deleteExpiredGatewaySessions } from '../db/gateway-session.repo.ts';
import type { Logger } from '../log.ts';
import type { PeriodicSpec } from './every.ts';

/** Rows deleted per statement: a short lock each, the next batch right after. */
const SWEEP_BATCH = 1_000;

export const GATEWAY_SESSION_SWEEP: PeriodicSpec = {
  name: 'gateway_session_sweep',
  intervalMs: 10 * 60 * 1000,
  firstDelayMs: 60_000,
};

/** Deletes every expired gateway session and login in progress, in batches; how many of each. */
export async function sweepGatewaySessions(deps: { db: Db; log: Logger }, signal?: AbortSignal): Promise<{ sessions: number; logins: number }> {
  const total = { sessions: 0, logins: 0 };
  for (;;) {
    const n = await deleteExpiredGatewaySessions(deps.db, SWEEP_BATCH);
    total.sessions += n.sessions;
    total.logins += n.logins;
    if ((n.sessions < SWEEP_BATCH && n.logins < SWEEP_BATCH) || signal?.aborted) break;
  }
  if (total.sessions || total.logins) deps.log.info(total, 'expired gateway sessions deleted');
  return total;
}
