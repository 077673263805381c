import type { Db } from '../db/db.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { StrandedHint, Waiters, type CommandBus } from './command-bus.ts';

// The channel the write statements NOTIFY (src/db/unit-write.ts) and this bus listens on.
const COMMANDS_CHANNEL = 'svc_commands';
// Payload prefix of the reaper's announcements of stranded commands (else: a count of new ones).
const STRANDED_PREFIX = 'stranded:';

/**
 * The default bus: PostgreSQL LISTEN on `svc_commands`, NOTIFYed by the transactions that issue
 * commands. The connection comes back after a database restart (db.ts); since notifications sent
 * while it was away are lost, every waiting claimer is then woken to look for pending commands.
 */
export async function createPostgresBus(db: Db, opts: { log?: Logger; metrics?: Pick<Metrics, 'busReconnects'> } = {}): Promise<CommandBus> {
  const waiters = new Waiters();
  const stranded = new StrandedHint();
  const heard = (payload: string) => {
    if (payload.startsWith(STRANDED_PREFIX)) stranded.heard();
    waiters.notify();
  };
  const unlisten = await db.listen(COMMANDS_CHANNEL, heard, {
    lost: (err) => opts.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'bus: LISTEN connection lost; reconnecting'),
    resumed: () => {
      opts.metrics?.busReconnects.inc();
      opts.log?.info('bus: LISTEN connection back; waking claimers to look for commands issued meanwhile');
      waiters.notify();
    },
  });
  return {
    next: (timeoutMs, signal) => waiters.next(timeoutMs, signal),
    get connected() {
      return db.listening;
    },
    // Through the database, so the claimers of every server hear it (this one at once).
    async publish(count, isStranded) {
      if (isStranded) stranded.heard();
      await db.notify(COMMANDS_CHANNEL, `${isStranded ? STRANDED_PREFIX : ''}${count}`);
    },
    strandedHeard: () => stranded.active(),
    async close() {
      unlisten();
      waiters.notify();
    },
  };
}
