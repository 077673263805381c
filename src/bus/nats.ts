import { AckPolicy, jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, type Consumer } from '@nats-io/jetstream';
import { AuthorizationError, nanos, UserAuthenticationExpiredError, type NatsConnection } from '@nats-io/transport-node';
import type { BatchWake } from '../../actors/batch-wake.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { announceFailureLog } from './announce-failure-log.ts';
import { StrandedHint, Waiters, type CommandBus } from './command-bus.ts';
import { connectNatsBus, RECONNECT_WAIT_MS } from './nats-connect.ts';
import { natsBusTarget } from './nats-target.ts';

// The NATS JetStream bus (DESIGN.md "Scale-out"; SVC_NATS_URL): what the PostgreSQL bus does with
// LISTEN/NOTIFY, without a NOTIFY on the hot path (the pool's connections say `svc.notify = off`,
// src/db/db.ts): after a unit commits, the engine announces its new commands here.
// - Commands waiting: a message on `svc.cmd.<execution_id % PARTITIONS>` in the work-queue
//   stream SVC_COMMANDS (namespaced: below), kept until a server with a claimer
//   waiting takes it (a server pulls from the one durable consumer only while a claimer of its
//   own waits), so one is never lost for want of a listener; that server's claimers look for
//   commands.
// - Stranded commands announced by the reaper, and batches accepted: plain subjects every server
//   of the deployment hears (svc.hint.stranded, svc.wake.batch), so processors of every server
//   look without a poll.
// The database stays the truth: a lost or doubled message delays work (the reaper announces
// PENDING commands again) but never runs it twice (the claim decides). After a reconnect every
// waiting claimer looks, for what was announced meanwhile.
// - Deployments sharing one NATS (staging and production on one cluster) each set a namespace of
//   their own (SVC_NATS_NAMESPACE, natsNames): with one stream for all, a server of the other
//   deployment, whose claimers wait, took the announcements as often as not, and the worker that
//   could run the command waited out its claim's wait.

const CONSUMER = 'svc-claimers';
/** Subjects the announcements are spread over (by execution): the stream's order is per subject. */
export const NATS_PARTITIONS = 16;

/** One deployment's stream and subjects on a NATS that other deployments' servers may use too. */
export type NatsNames = { stream: string; subjects: string; command: (partition: number) => string; stranded: string; batch: string };

/**
 * The names of a deployment's bus: DESIGN.md's `svc.cmd.<partition>` in the stream SVC_COMMANDS,
 * or, with a `namespace` (SVC_NATS_NAMESPACE), `svc.<namespace>.cmd.<partition>` in
 * SVC_COMMANDS_<namespace>, for deployments that share one NATS.
 */
export function natsNames(namespace?: string): NatsNames {
  const prefix = namespace === undefined ? 'svc' : `svc.${namespace}`;
  return {
    stream: namespace === undefined ? 'SVC_COMMANDS' : `SVC_COMMANDS_${namespace}`,
    subjects: `${prefix}.cmd.*`,
    command: (partition) => `${prefix}.cmd.${partition}`,
    stranded: `${prefix}.hint.stranded`,
    batch: `${prefix}.wake.batch`,
  };
}

/** An announcement nobody took within this is dropped (its command is announced again by the reaper). */
const MESSAGE_MAX_AGE_MS = 10 * 60_000;
const MAX_MESSAGES = 100_000;
const ACK_WAIT_MS = 30_000;
const FETCH_MAX = 64;
/** Messages for one unit's commands at most: enough to wake every server's claimers; more wake none. */
const MAX_MESSAGES_PER_UNIT = 16;
const FETCH_EXPIRES_MS = 1_000;
const RETRY_MS = 250;
/** An announcement given back is offered again after this (to another pull, or this one later). */
const GIVEN_BACK_DELAY_MS = 50;
/** How long a stop waits for the connection's drain before it closes it. */
const CLOSE_DRAIN_MS = 2_000;

/** A bus that also takes the engine's announcements after commit (EngineDeps.announce). */
export type NatsBus = CommandBus & {
  /** Commands of these executions wait to be claimed (a unit committed them PENDING): an id per command. */
  commands(executionIds: readonly number[]): void;
  /**
   * Which NATS this is, as servers of one database compare it: when its stream of this database
   * was made (one stream, one time, on every server of a NATS cluster; another NATS has its own);
   * null while NATS does not answer.
   */
  streamMade(): Promise<string | null>;
};

const isApiError = (err: unknown, code: number) => err instanceof JetStreamApiError && err.code === code;
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Connects to `url` (SVC_NATS_URL, its login included: src/bus/nats-connect.ts), makes the stream
 * and consumer of `names` (the deployment's: natsNames) if missing, and starts listening.
 * `startWaitMs`: how long a start waits for NATS.
 */
export async function createNatsBus(url: string, opts: { log: Logger; metrics: Pick<Metrics, 'busReconnects'>; batchWake: BatchWake; names: NatsNames; startWaitMs?: number }): Promise<NatsBus> {
  const { log, metrics, batchWake, names } = opts;
  const target = natsBusTarget(url);
  const nc: NatsConnection = await connectNatsBus(target, log, opts.startWaitMs);
  await ensureStream(nc, names).catch(async (err: unknown) => {
    await nc.close();
    // nats.js says only "jetstream is not enabled", naming neither the setting, the server nor the
    // fix; a nats-server started without -js (Debian's service does so) answers that way.
    if (err instanceof Error && err.name === 'JetStreamNotEnabled') {
      throw new Error(`NATS at ${target.servers.join(', ')} (SVC_NATS_URL) has JetStream off, which the bus needs: start nats-server with -js (or jetstream {} in its configuration), and for a login of its own enable JetStream for its account`);
    }
    throw err;
  });
  // Named for an operator who grants a NATS login its subjects, or looks for the stream.
  log.info({ stream: names.stream, subjects: names.subjects }, "bus: NATS JetStream stream of this server's deployment");
  const js = jetstream(nc);
  const waiters = new Waiters();
  const stranded = new StrandedHint();
  let connected = true;
  let closed = false;
  // Resolved when the connection is back (or the bus closes): the pull waits for it, see below.
  let back = Promise.withResolvers<void>();
  // A refused login is said once per loss (a reconnect is tried every 250 ms): "reconnecting"
  // alone does not tell an operator that it is NATS that will not let the server in.
  let refusalLogged = false;
  const watch = (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        connected = false;
        log.warn('bus: NATS connection lost; reconnecting');
      } else if (s.type === 'error' && (s.error instanceof AuthorizationError || s.error instanceof UserAuthenticationExpiredError) && !refusalLogged) {
        refusalLogged = true;
        log.error({ servers: target.servers, err: s.error.message }, `bus: NATS refused the bus's login (SVC_NATS_URL); trying again every ${RECONNECT_WAIT_MS} ms, meanwhile workers find new commands only when their claims' waits end`);
      } else if (s.type === 'reconnect') {
        refusalLogged = false;
        connected = true;
        back.resolve();
        back = Promise.withResolvers();
        metrics.busReconnects.inc();
        log.info('bus: NATS connection back; waking claimers to look for commands announced meanwhile');
        waiters.notify();
      }
    }
  })();
  nc.subscribe(names.stranded, {
    callback: () => {
      stranded.heard();
      waiters.notify();
    },
  });
  nc.subscribe(names.batch, { callback: () => batchWake.heard() });
  // The server has the subscriptions before this bus is in use: a wake published by another
  // server right after this one started is not missed (CI saw one lost without it).
  await nc.flush();
  // This server's accepted batches wake the processors of every server.
  batchWake.announceWith(() => nc.publish(names.batch));

  // Takes announcements while a claimer of this server waits; each wakes them all.
  const pull = (async () => {
    let consumer: Consumer | undefined;
    while (!closed) {
      try {
        await waiters.someoneWaiting();
        if (closed) break;
        consumer ??= await js.consumers.get(names.stream, CONSUMER);
        const batch = await consumer.fetch({ max_messages: FETCH_MAX, expires: FETCH_EXPIRES_MS });
        for await (const m of batch) {
          // A pull outlives the wait that began it (up to FETCH_EXPIRES_MS): an announcement that
          // comes when no claimer of this server waits any more is given back, for a server
          // whose claimers do wait, instead of being taken here by no one.
          if (!waiters.waiting) {
            m.nak(GIVEN_BACK_DELAY_MS);
            continue;
          }
          m.ack();
          waiters.notify();
        }
      } catch (err) {
        if (closed) break;
        consumer = undefined;
        log.debug({ err: message(err) }, 'bus: NATS pull failed; trying again');
        // The stream or consumer went (deleted by hand): made again.
        if (isApiError(err, JetStreamApiCodes.StreamNotFound) || isApiError(err, JetStreamApiCodes.ConsumerNotFound)) await ensureStream(nc, names).catch(() => {});
        await new Promise((r) => setTimeout(r, RETRY_MS));
        // A JetStream request sent while the connection is away waits out its whole timeout (5 s)
        // though the connection is back in a fraction of it: the announcements sent meanwhile
        // reached no claimer for those seconds. Sent once it is back instead.
        if (!connected) await back.promise;
      }
    }
  })();

  const failures = announceFailureLog(log);
  const announce = (partition: number, body: string) => {
    js.publish(names.command(partition), body).then(
      () => failures.stored(),
      // Not stored: the command waits for a claimer's next look or the reaper's announcement.
      (err: unknown) => failures.failed(err),
    );
  };

  return {
    next: (timeoutMs, signal) => waiters.next(timeoutMs, signal),
    get connected() {
      return connected && !nc.isClosed();
    },
    async publish(count, isStranded) {
      if (isStranded) {
        stranded.heard();
        nc.publish(names.stranded);
      }
      announce(0, String(count));
    },
    commands(executionIds) {
      // A message per command (one id each), not per partition: each message wakes the claimers
      // of the one server that takes it, which claim what they have room for; the commands left
      // need the claimers of another server, which only another message wakes (one a server
      // takes with no claimer left waiting it gives back, above).
      for (const id of executionIds.slice(0, MAX_MESSAGES_PER_UNIT)) announce(id % NATS_PARTITIONS, '1');
    },
    strandedHeard: () => stranded.active(),
    streamMade: async () => {
      if (!connected) return null;
      return (await jetstreamManager(nc)).streams.info(names.stream).then((i) => i.created, () => null);
    },
    async close() {
      closed = true;
      back.resolve();
      batchWake.announceWith(undefined);
      waiters.close();
      // A drain flushes through the server: with NATS away it waits for its return, for ever,
      // and the server's stop with it. Closed at once then, and after CLOSE_DRAIN_MS at most.
      if (connected) await Promise.race([nc.drain().catch(() => {}), new Promise((r) => setTimeout(r, CLOSE_DRAIN_MS).unref())]);
      if (!nc.isClosed()) await nc.close().catch(() => {});
      await Promise.all([pull, watch]).catch(() => {});
    },
  };
}

/** The work-queue stream of one deployment's announcements and its one durable pull consumer, made when missing. */
async function ensureStream(nc: NatsConnection, names: NatsNames): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(names.stream);
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
    await jsm.streams.add({ name: names.stream, subjects: [names.subjects], retention: RetentionPolicy.Workqueue, storage: StorageType.File, max_age: nanos(MESSAGE_MAX_AGE_MS), max_msgs: MAX_MESSAGES });
  }
  try {
    await jsm.consumers.info(names.stream, CONSUMER);
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
    await jsm.consumers.add(names.stream, { durable_name: CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(ACK_WAIT_MS), filter_subject: names.subjects });
  }
}
