import type { Db } from '../db/db.ts';
import { Waiters, type CommandBus } from './command-bus.ts';

/** The default bus: PostgreSQL LISTEN on `svc_commands`, NOTIFYed by the transactions that issue commands. */
export async function createPostgresBus(db: Db): Promise<CommandBus> {
  const waiters = new Waiters();
  const unlisten = await db.listen('svc_commands', () => waiters.notify());
  return {
    next: (timeoutMs, signal) => waiters.next(timeoutMs, signal),
    get connected() {
      return db.listening;
    },
    async close() {
      unlisten();
      waiters.notify();
    },
  };
}
