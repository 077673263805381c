// What the HTTP host hands every plugin of src/api. Its own module so that the plugins and the app
// that registers them (src/app.ts) do not import each other.
import type { BatchWake } from '../actors/batch-wake.ts';
import type { HotSnapshots } from '../actors/hot-snapshots.ts';
import type { PlaybookCache } from '../actors/playbook-cache.ts';
import type { CommandBus } from './bus/command-bus.ts';
import type { Config } from './config.ts';
import type { Keyring } from './crypto/keyring.ts';
import type { Db } from './db/db.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';
import type { TraceSink } from './telemetry/trace-sink.ts';
import type { WaitClock } from './waits/wait-clock.ts';
import type { FlowClock } from './flow/flow-clock.ts';
import type { ScheduleClock } from './triggers/schedule-clock.ts';
import type { ParkedClaims } from '../actors/parked-claims.ts';
import type { KeyRooms } from '../actors/key-rooms.ts';

/** What the HTTP host needs; tests build it against their own database. */
export type AppDeps = {
  config: Config;
  db: Db;
  log: Logger;
  metrics: Metrics;
  /** Seals and opens credential and keychain data; holds keys without exposing them to logs. */
  keyring: Keyring;
  /** Compiled playbooks by catalog_id (immutable, so shared freely). */
  cache: PlaybookCache;
  /** Machine snapshots of executions this process routed last (see actors/hot-snapshots.ts). */
  snapshots: HotSnapshots;
  /** How many starts each concurrency key can admit at once, as this process last knew (see actors/key-rooms.ts). */
  rooms: KeyRooms;
  /** Long-polling claimers waiting for work, which a unit hands the new commands it issues (see actors/parked-claims.ts). */
  parked: ParkedClaims;
  /** Wakes long-polling claimers when commands are issued. */
  bus: CommandBus;
  /** The one credential worker routes take (SVC_WORKER_TOKEN, or the embedded default's file). */
  workerToken: string;
  /** Wakes this server's batch processors when it accepted a batch (actors/batch-wake.ts). */
  batchWake: BatchWake;
  /** Tells this server's timekeeper of wake-up times its routings wrote (src/waits/wait-clock.ts). */
  waitClock?: WaitClock;
  /** Tells this server's admitter of admissions due (src/flow/admitter.ts). */
  flowClock?: FlowClock;
  /** Tells this server's scheduler of executions that ended (src/triggers/schedule-clock.ts). */
  scheduleClock?: ScheduleClock;
  /** Hears of every committed unit when traces are on (OTEL_EXPORTER_OTLP_ENDPOINT; src/telemetry/). */
  traces?: TraceSink;
  /** The built web console served at /ui/ (default gui/dist; tests point it elsewhere). */
  guiDir?: string;
};

declare module 'fastify' {
  interface FastifyInstance {
    /** Aborted when the server starts closing: long polls end at once. */
    closingSignal: AbortSignal;
  }
}
