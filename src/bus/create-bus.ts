import type { Announcer } from '../../actors/engine-deps.ts';
import type { BatchWake } from '../../actors/batch-wake.ts';
import type { Db } from '../db/db.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { CommandBus } from './command-bus.ts';
import type { BusId } from './server-bus.ts';
import { createPostgresBus } from './postgres.ts';

/**
 * The server's bus: NATS JetStream with `natsUrl` (src/bus/nats.ts; then `announce` is what the
 * engine tells it after each commit, and `db` must be opened with `notify: false`), else
 * PostgreSQL LISTEN/NOTIFY (src/bus/postgres.ts), the embedded default. `natsNamespace` names the
 * NATS bus's stream and subjects apart from other deployments' on the same NATS.
 */
export async function createBus(natsUrl: string | undefined, natsNamespace: string | undefined, db: Db, deps: { log: Logger; metrics: Metrics; batchWake: BatchWake }): Promise<{ bus: CommandBus; announce?: Announcer; busId?: BusId; stream?: string }> {
  if (!natsUrl) return { bus: await createPostgresBus(db, deps) };
  // Loaded only when configured.
  const nats = await import('./nats.ts');
  const names = nats.natsNames(natsNamespace);
  const bus = await nats.createNatsBus(natsUrl, { ...deps, names });
  return { bus, announce: { commands: (ids) => bus.commands(ids), room: () => void bus.publish(0, false) }, busId: () => bus.streamMade(), stream: names.stream };
}
