import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../src/app-deps.ts';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createKeyring } from '../../src/crypto/keyring.ts';
import { PlaybookCache } from '../../actors/playbook-cache.ts';
import { HotSnapshots } from '../../actors/hot-snapshots.ts';
import { KeyRooms } from '../../actors/key-rooms.ts';
import { ParkedClaims } from '../../actors/parked-claims.ts';
import { createPostgresBus } from '../../src/bus/postgres.ts';
import { Db } from '../../src/db/db.ts';
import { startBatchProcessor } from '../../actors/batch-processor.ts';
import { BatchWake } from '../../actors/batch-wake.ts';
import { createLogger } from '../../src/log.ts';
import { startTimekeeper } from '../../src/waits/timekeeper.ts';
import { startAdmitter } from '../../src/flow/admitter.ts';
import { ScheduleClock } from '../../src/triggers/schedule-clock.ts';
import { WaitClock } from '../../src/waits/wait-clock.ts';
import { FlowClock } from '../../src/flow/flow-clock.ts';
import { createMetrics } from '../../src/metrics.ts';
import { TEST_WORKER_TOKEN } from './auth.ts';
import { createMigratedDatabase } from './database.ts';

export type TestApp = {
  app: FastifyInstance;
  deps: AppDeps;
  url: string;
  databaseUrl: string;
  /** Every log line written so far (JSON text), for secret-leak checks. */
  logs: string[];
  /** The worker token the server takes (TEST_WORKER_TOKEN unless env sets SVC_WORKER_TOKEN). */
  workerToken: string;
  close(): Promise<void>;
};

/** A real app on its own fresh database, listening on 127.0.0.1 port 0, with batch processors (as `svc server`, unless `opts.batchProcessors` is false); SVC_AUTH=none, TEST_WORKER_TOKEN and a 10 s batch accept unless `env` says otherwise. */
export async function startTestApp(env: Record<string, string> = {}, opts: { batchPollIntervalMs?: number; batchProcessors?: boolean } = {}): Promise<TestApp> {
  const t = await createMigratedDatabase();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  // A batch's accept gets 10 s, not the spec's 0.25: on a loaded CI machine a correct accept can take
  // longer, and its 503 ack_timeout would fail a test about something else. Tests of the timeout set it.
  const config = loadConfig({
    SVC_LOG_LEVEL: 'debug',
    SVC_PORT: '0',
    SVC_HOST: '127.0.0.1',
    SVC_WORKER_TOKEN: TEST_WORKER_TOKEN,
    SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '10',
    ...env,
    SVC_DATABASE_URL: t.url,
  });
  const workerToken = config.SVC_WORKER_TOKEN ?? TEST_WORKER_TOKEN;
  const log = createLogger(config.SVC_LOG_LEVEL, sink);
  const waitClock = new WaitClock();
  const flowClock = new FlowClock();
  const deps: AppDeps = {
    config,
    db: t.db,
    log,
    metrics: createMetrics(),
    keyring: createKeyring(randomBytes(32), []),
    cache: new PlaybookCache(),
    snapshots: new HotSnapshots(),
    rooms: new KeyRooms(t.db),
    parked: new ParkedClaims(),
    bus: await createPostgresBus(t.db),
    workerToken,
    batchWake: new BatchWake(),
    waitClock,
    flowClock,
    scheduleClock: new ScheduleClock(),
  };
  // Without processors (`batchProcessors: false`) accepted batches wait until a test starts some.
  const stopBatches = opts.batchProcessors === false ? async () => {} : await startBatchProcessor(deps, { pollIntervalMs: opts.batchPollIntervalMs });
  // Waiting steps need their timekeeper, as `svc server` runs it (src/periodic/start-periodic.ts).
  const timekeeper = startTimekeeper(deps, waitClock);
  // So do queued executions their admitter (src/flow/admitter.ts).
  const admitter = startAdmitter(deps, flowClock);
  const app = await buildApp(deps);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    deps,
    url: address,
    databaseUrl: t.url,
    logs,
    workerToken,
    async close() {
      await app.close();
      await timekeeper.stop();
      await admitter.stop();
      await stopBatches();
      await deps.bus.close();
      await t.drop();
    },
  };
}

/**
 * A second server on `a`'s database, listening on 127.0.0.1 port 0: its own pool, bus, cache,
 * metrics and batchers, no batch processors (its accepts wake none: `a`'s find them at their poll),
 * the same config, keys and worker token, and a silent log.
 */
export async function startSecondServer(a: TestApp): Promise<{ url: string; deps: AppDeps; close(): Promise<void> }> {
  const db = new Db(a.databaseUrl, 10);
  const deps: AppDeps = {
    ...a.deps,
    db,
    log: createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() })),
    metrics: createMetrics(),
    cache: new PlaybookCache(),
    snapshots: new HotSnapshots(),
    rooms: new KeyRooms(db),
    parked: new ParkedClaims(),
    bus: await createPostgresBus(db),
    batchWake: new BatchWake(),
  };
  const app = await buildApp(deps);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    deps,
    async close() {
      await app.close();
      await deps.bus.close();
      await db.close();
    },
  };
}
