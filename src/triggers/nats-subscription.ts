import { jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import { StartPreludeCache } from '../../actors/start-prelude-cache.ts';
import { fireGroups } from './fire-trigger.ts';
import { ensureNatsConsumer } from './nats-consumer.ts';
import { natsDurableName } from './nats-durable-name.ts';
import type { NatsLogin } from './nats-login.ts';
import { natsMessageFire } from './nats-message-fire.ts';
import type { NatsTrigger } from './trigger.schema.ts';
import { REDACTED } from '../redact-for-log.ts';
import { databaseNow } from '../waits/wait-clock.ts';

// One NATS trigger on one server: a connection of its own (the client reconnects by itself), the
// trigger's durable pull consumer, and at most `max_in_flight` messages being fired at once. A
// message is acked only once its fire committed (fire-trigger.ts), so a crash before that
// redelivers it, and its fire key (stream, sequence) makes the redelivery start nothing twice.

/** A failed fire (the database) is delivered again after this. */
export const NATS_NAK_DELAY_MS = 2_000;
const CONNECT_TIMEOUT_MS = 5_000;
const RECONNECT_WAIT_MS = 1_000;
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export type NatsSubscriptionTarget = {
  path: string;
  name: string;
  spec: NatsTrigger;
  login: NatsLogin;
  startTime: Date;
  /** The catalog version `spec` was read from: a fire finds the trigger still of it, or writes nothing (follow). */
  catalogId: number;
  /** A fire found the trigger changed by a newer version: its message went back to the stream; read the triggers again. */
  onChanged?: () => void;
  /** Why it cannot consume (the login's secrets masked), at each failed try; null once it consumes. */
  onProblem?: (problem: string | null) => void;
};

export type NatsSubscription = {
  /** Stops taking messages, waits for the fires in flight (acked or not), closes the connection; `deleteConsumer` removes the durable first. */
  stop(opts?: { deleteConsumer?: boolean }): Promise<void>;
  /** A newer version `catalogId` left the trigger's spec as it was: fires are made as of it from now on. */
  follow(catalogId: number): void;
};

/**
 * Consumes a NATS trigger's messages until stopped: makes its durable consumer (nats-consumer.ts),
 * fires one execution per message and acks it after the fire committed, naks a fire that failed;
 * a lost consumer, stream or connection is made again after a backoff. Never logs the login.
 */
export function startNatsSubscription(deps: EngineDeps, target: NatsSubscriptionTarget): NatsSubscription {
  const { path, name, spec, login } = target;
  const label = `${path}/${name}`;
  const durable = natsDurableName(path, name);
  const log = deps.log.child({ trigger: label, stream: spec.stream, server: login.server });
  const masked = maskedBy(login);
  const abort = new AbortController();
  let nc: NatsConnection | undefined;
  let messages: ConsumerMessages | undefined;
  let wake: (() => void) | undefined;
  // Catalog heads and execution ids from memory while messages keep coming (the write checks a head).
  const prelude = new StartPreludeCache();
  let catalogId = target.catalogId;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  // Never throws: a fire that fails for any reason is nak'd and delivered again.
  const handle = async (m: JsMsg, streamCreated: string) => {
    try {
      const version = catalogId;
      const fire = natsMessageFire({ name, payload: spec.payload }, m, streamCreated, new Date(databaseNow(deps)));
      // Live: a pause, or a new version (without the trigger, or with another payload than the one
      // rendered here), committed while the message was being fired makes it write nothing; the
      // message goes back to the stream, for a resume or the subscription of the new version.
      const [group] = await fireGroups(deps, [{ trigger: { path, name, kind: 'nats' }, fires: [fire], live: 'active', catalogId: version }], { prelude });
      if (group.raced) {
        log.info({ seq: m.info.streamSequence, trigger: group.inactive }, 'NATS trigger paused, removed or changed meanwhile: message not fired, delivered again');
        settle(() => m.nak(NATS_NAK_DELAY_MS));
        if (group.inactive === 'changed') target.onChanged?.();
        return;
      }
      const [result] = group.results;
      if (result.outcome === 'refused' && !result.duplicate) log.warn({ seq: m.info.streamSequence, reason: result.error }, 'NATS message refused: recorded, nothing started');
    } catch (err) {
      log.warn({ seq: m.info.streamSequence, err: masked(err instanceof Error ? err.message : String(err)) }, 'NATS message not fired; it is delivered again');
      settle(() => m.nak(NATS_NAK_DELAY_MS));
      return;
    }
    // Committed: the fire is recorded, so a lost ack only means a redelivery that starts nothing.
    settle(() => m.ack());
  };

  const consumeOnce = async (conn: NatsConnection): Promise<number> => {
    const { streamCreated } = await ensureNatsConsumer(await jetstreamManager(conn), {
      stream: spec.stream,
      durable,
      subject: spec.subject,
      maxInFlight: spec.max_in_flight,
      startTime: target.startTime,
      description: `svc trigger ${label}`,
    });
    const consumer = await jetstream(conn).consumers.get(spec.stream, durable);
    const msgs = await consumer.consume({ max_messages: spec.max_in_flight });
    messages = msgs;
    // Stopped meanwhile: what it delivers is nak'd below, then it ends (its close resolves as it is read).
    if (abort.signal.aborted) void msgs.close();
    watchConsumer(msgs).catch(() => {});
    log.info({ consumer: durable, subject: spec.subject }, 'NATS trigger consuming');
    target.onProblem?.(null);
    const slots = new Slots(spec.max_in_flight);
    const inFlight = new Set<Promise<void>>();
    let taken = 0;
    try {
      for await (const m of msgs) {
        // Taken from the buffer after a stop: back to the stream at once, for another server or a resume.
        if (abort.signal.aborted) {
          settle(() => m.nak());
          continue;
        }
        await slots.take();
        taken++;
        const p: Promise<void> = handle(m, streamCreated).finally(() => {
          slots.release();
          inFlight.delete(p);
        });
        inFlight.add(p);
      }
    } finally {
      // Even when the consume failed: its fires end (acked or nak'd) before the next one starts.
      await Promise.all(inFlight);
    }
    return taken;
  };

  // A consumer or stream deleted under us: end this consume, the loop makes them again.
  const watchConsumer = async (msgs: ConsumerMessages) => {
    for await (const s of msgs.status()) {
      if (s.type === 'consumer_deleted' || s.type === 'consumer_not_found' || s.type === 'stream_not_found') {
        log.warn({ status: s.type }, 'NATS consumer gone; making it again');
        await msgs.close();
        return;
      }
    }
  };

  const watchConnection = async (conn: NatsConnection) => {
    for await (const s of conn.status()) {
      if (s.type === 'disconnect') log.warn('NATS connection lost; reconnecting');
      else if (s.type === 'reconnect') log.info('NATS connection back');
    }
  };

  const loop = (async () => {
    for (let attempt = 0; !abort.signal.aborted; attempt++) {
      try {
        if (!nc || nc.isClosed()) {
          nc = await connect({
            ...login.options,
            name: `svc trigger ${label}`,
            timeout: CONNECT_TIMEOUT_MS,
            maxReconnectAttempts: -1,
            reconnectTimeWait: RECONNECT_WAIT_MS,
          });
          const conn = nc;
          watchConnection(conn).catch(() => {});
          // A connection closed for good (not a reconnect) ends the consume: the loop connects again.
          conn.closed().then(() => messages?.close()).catch(() => {});
        }
        if (abort.signal.aborted) break;
        if ((await consumeOnce(nc)) > 0) attempt = 0;
      } catch (err) {
        if (abort.signal.aborted) break;
        const problem = err instanceof Error ? err.message : String(err);
        // Masked in the log as where it is stored: an error of the client may quote its login.
        log.warn({ err: masked(problem) }, 'NATS trigger cannot consume; trying again');
        target.onProblem?.(masked(problem));
      }
      if (!abort.signal.aborted) await sleep(Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(attempt, 5)));
    }
  })();

  return {
    follow(id) {
      catalogId = id;
    },
    async stop(opts = {}) {
      abort.abort();
      wake?.();
      await messages?.close();
      await loop;
      const conn = nc;
      if (!conn || conn.isClosed()) return;
      if (opts.deleteConsumer) {
        try {
          await (await jetstreamManager(conn)).consumers.delete(spec.stream, durable);
          log.info({ consumer: durable }, 'NATS trigger removed: its consumer is deleted');
        } catch (err) {
          log.warn({ consumer: durable, err: masked(err instanceof Error ? err.message : String(err)) }, 'the consumer of a removed NATS trigger could not be deleted');
        }
      }
      await conn.close();
    },
  };
}

/** `text` with the login's secrets (password, token, seed, JWT) masked: an error of the client may quote what it was given. */
function maskedBy(login: NatsLogin): (text: string) => string {
  const secrets = [...login.secrets].sort((a, b) => b.length - a.length);
  return (text) => secrets.reduce((t, secret) => t.replaceAll(secret, REDACTED), text);
}

/** An ack or nak on a connection that just closed throws; the message is then redelivered anyway. */
function settle(send: () => void): void {
  try {
    send();
  } catch {
    // Redelivered after the ack wait; its fire key makes that start nothing twice.
  }
}

/** At most `size` holders at once. */
class Slots {
  #free: number;
  #waiting: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }
  async take(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
