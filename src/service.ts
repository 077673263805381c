import { resolve } from 'node:path';
import { readerPassword } from './api/postgres.ts';
import type { AppDeps } from './app-deps.ts';
import { buildApp } from './app.ts';
import { resolveWorkerToken } from './auth/worker-token.ts';
import { checkServerAuth, ConfigError, type Config } from './config.ts';
import { listenFailure } from './listen-failure.ts';
import { Db } from './db/db.ts';
import { openDatabase } from './db/open-database.ts';
import { migrate, sayMigrated } from './db/migrate.ts';
import { serviceReaderUrl } from './db/sql-execute.ts';
import { servicePowers } from './db/service-owner.ts';
import { startBatchProcessor } from '../actors/batch-processor.ts';
import { BatchWake } from '../actors/batch-wake.ts';
import { PlaybookCache } from '../actors/playbook-cache.ts';
import { HotSnapshots } from '../actors/hot-snapshots.ts';
import { KeyRooms } from '../actors/key-rooms.ts';
import { ParkedClaims } from '../actors/parked-claims.ts';
import { createBus } from './bus/create-bus.ts';
import { busKindOf, registerServerBus } from './bus/server-bus.ts';
import { checkStoredKeys } from './crypto/check-stored-keys.ts';
import { parseKeyringFromEnv } from './crypto/keyring.ts';
import { resolveEncryptionKey } from './encryption-key.ts';
import { createLogger, type Logger } from './log.ts';
import { createMetrics } from './metrics.ts';
import { startPeriodic } from './periodic/start-periodic.ts';
import { tracesConfigured } from './telemetry/traces-configured.ts';
import { ScheduleClock } from './triggers/schedule-clock.ts';
import { WaitClock } from './waits/wait-clock.ts';
import { readDatabaseClock } from './waits/read-database-clock.ts';
import { FlowClock } from './flow/flow-clock.ts';
import type { InProcessServer } from './worker/server-client.ts';
import { inProcessServer } from './in-process-server.ts';

export type RunningService = {
  url: string;
  databaseUrl: string;
  dataDir: string;
  embedded: boolean;
  deps: AppDeps;
  /** This server without a socket, for the workers of this process (src/worker/server-client.ts). */
  inProcess: InProcessServer;
  /**
   * The service database as its read-only reader role, for in-process workers (their `read_only`
   * postgres tasks, e.g. the doctor's); undefined, logged, when the role cannot log in.
   */
  readerDatabaseUrl(): Promise<string | undefined>;
  /** The service's database user is a superuser (an external SVC_DATABASE_URL): warned at start. */
  databaseSuperuser: boolean;
  stop(): Promise<void>;
};

/**
 * Starts the whole server: database (embedded when no URL), migrations, HTTP host on
 * SVC_HOST:SVC_PORT. `stop()` closes in reverse order: HTTP, pool, embedded PostgreSQL.
 */
export async function startService(config: Config, opts: { log?: Logger } = {}): Promise<RunningService> {
  const log = opts.log ?? createLogger(config.SVC_LOG_LEVEL);
  checkServerAuth(config);
  // Before the database: the embedded default must see whether its database already exists (a
  // missing key file is then refused, not replaced), and a bad key never starts PostgreSQL.
  const encryptionKey = await resolveEncryptionKey({
    configured: config.SVC_ENCRYPTION_KEY,
    dataDir: config.SVC_DATA_DIR,
    embedded: !config.SVC_DATABASE_URL,
  });
  const keyring = parseKeyringFromEnv(encryptionKey.key, config.SVC_ENCRYPTION_KEYS_OLD, encryptionKey.source);
  const workerToken = await resolveWorkerToken({ configured: config.SVC_WORKER_TOKEN, dataDir: config.SVC_DATA_DIR, embedded: !config.SVC_DATABASE_URL });
  const database = await openDatabase(config, log);
  const stops: (() => Promise<void>)[] = [];
  if (database.embedded) stops.unshift(() => database.embedded!.stop());
  try {
    // With the NATS bus, the statements send no NOTIFY: the engine announces on NATS after commit.
    const db = new Db(database.url, 20, { notify: !config.SVC_NATS_URL });
    stops.unshift(() => db.close());
    // An upgrade says what it changed in the database (`svc migrate` prints the same).
    sayMigrated(log, await migrate(db, undefined, { log }));
    const powers = await servicePowers(db);
    const databaseSuperuser = powers.superuser;
    // A key that cannot open the stored rows is refused now, not found out on every later read.
    await checkStoredKeys(db, keyring, encryptionKey.source);
    const metrics = createMetrics();
    const batchWake = new BatchWake();
    const { bus, announce, busId, stream } = await createBus(config.SVC_NATS_URL, config.SVC_NATS_NAMESPACE, db, { log, metrics, batchWake });
    stops.unshift(() => bus.close());
    // Before anything is served: a server beside live servers on the other bus, or on another
    // NATS (busId: which one the bus connected to) or stream there (SVC_NATS_NAMESPACE), is refused (exit 78).
    stops.unshift(await registerServerBus(busKindOf(config.SVC_NATS_URL), { db, log, metrics }, busId, stream));
    const waitClock = new WaitClock();
    await readDatabaseClock(db, waitClock);
    const deps: AppDeps = { config, db, log, metrics, keyring, cache: new PlaybookCache(), snapshots: new HotSnapshots(config.SVC_HOT_SNAPSHOTS), rooms: new KeyRooms(db), parked: new ParkedClaims(), bus, workerToken, batchWake, waitClock, flowClock: new FlowClock(), scheduleClock: new ScheduleClock(), ...(announce ? { announce } : {}) };
    // Traces (OTEL_EXPORTER_OTLP_ENDPOINT, docs/operations.md): their code and the SDK load only when on,
    // and stop after the server (the last units' spans are sent).
    if (tracesConfigured(config)) {
      const tracing = (await import('./telemetry/start-tracing.ts')).startTracing(config, { db, log, waitClock: deps.waitClock });
      if (tracing) {
        deps.traces = tracing;
        stops.unshift(() => tracing.shutdown());
      }
    }
    stops.unshift(await startBatchProcessor(deps));
    const app = await buildApp(deps);
    stops.unshift(() => app.close());
    const address = await app.listen({ port: config.SVC_PORT, host: config.SVC_HOST }).catch((err: unknown) => {
      throw listenFailure(err, 'SVC_HOST', config.SVC_HOST, (message) => new ConfigError(`invalid ${message}`));
    });
    // Once started (a start that fails says only why it failed).
    if (databaseSuperuser) {
      log.warn(
        { user: new URL(database.url).username },
        'the service connects to PostgreSQL as a superuser: give it a non-superuser owner of its database and schemas (with CREATEROLE) in SVC_DATABASE_URL, see docs/operations.md',
      );
    }
    if (powers.grantsAnyRole) {
      log.warn(
        { user: new URL(database.url).username },
        "the service's database user has CREATEROLE on PostgreSQL 15 or older, where that lets it grant itself any role but superuser (pg_execute_server_program, pg_read_server_files): run the service's database on PostgreSQL 16 or later, see docs/operations.md",
      );
    }
    // Background work (src/periodic/): once the server is up, so that a start cut short (a signal
    // while it starts) never leaves it querying a database being stopped.
    stops.unshift(startPeriodic(deps));
    const port = new URL(address).port;
    const shownHost = config.SVC_HOST === '0.0.0.0' || config.SVC_HOST === '::' ? '127.0.0.1' : config.SVC_HOST;
    let stopped = false;
    return {
      url: `http://${shownHost}:${port}`,
      databaseUrl: database.url,
      dataDir: resolve(config.SVC_DATA_DIR),
      embedded: Boolean(database.embedded),
      deps,
      inProcess: inProcessServer(app),
      databaseSuperuser,
      async readerDatabaseUrl() {
        try {
          return await serviceReaderUrl(db, readerPassword(keyring));
        } catch (err) {
          log.warn({ err: err instanceof Error ? err.message : String(err) }, 'read_only postgres tasks of in-process workers cannot read the service database');
          return undefined;
        }
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        // The message only: a step that needs the database after a signal stopped the embedded one
        // (a stop during start) fails as expected, not as a fault with a class name and a stack.
        for (const s of stops) await s().catch((err) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'shutdown step failed'));
      },
    };
  } catch (err) {
    for (const s of stops) await s().catch(() => {});
    throw err;
  }
}
