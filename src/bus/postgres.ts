import type { Db } from '../db/db.ts';
import { StrandedHint, Waiters, type CommandBus } from './command-bus.ts';

// The channel the write statements NOTIFY (src/db/unit-write.ts) and this bus listens on.
const COMMANDS_CHANNEL = 'svc_commands';
// Payload prefix of the reaper's announcements of stranded commands (else: a count of new ones).
const STRANDED_PREFIX = 'stranded:';

/** The default bus: PostgreSQL LISTEN on `svc_commands`, NOTIFYed by the transactions that issue commands. */
export async function createPostgresBus(db: Db): Promise<CommandBus> {
  const waiters = new Waiters();
  const stranded = new StrandedHint();
  const unlisten = await db.listen(COMMANDS_CHANNEL, (payload) => {
    if (payload.startsWith(STRANDED_PREFIX)) stranded.heard();
    waiters.notify();
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
