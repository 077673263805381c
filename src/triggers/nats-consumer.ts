import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, type ConsumerInfo, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

/** A message not acked within this is delivered again (to any server): longer than any fire takes. */
export const NATS_ACK_WAIT_MS = 30_000;

/** The durable consumer of one trigger as it should be. */
export type NatsConsumerWanted = {
  stream: string;
  durable: string;
  subject: string;
  maxInFlight: number;
  /** Messages published from then on are delivered (the trigger's first registration). */
  startTime: Date;
  description: string;
};

const isApiError = (err: unknown, code: number) => err instanceof JetStreamApiError && err.code === code;

/**
 * Makes the trigger's durable pull consumer on its stream (explicit acks, the subject as filter, at
 * most `maxInFlight` unacked, delivering from `startTime`), or brings an existing one's filter and
 * limits up to date; a change the server refuses to make in place makes the consumer anew, from
 * now. On a work-queue stream it delivers every message the queue holds instead (below). Returns
 * the stream's creation time (part of every fire key). Throws when there is no stream.
 */
export async function ensureNatsConsumer(jsm: JetStreamManager, w: NatsConsumerWanted): Promise<{ streamCreated: string }> {
  const stream = await jsm.streams.info(w.stream);
  const settings = { filter_subject: w.subject, max_ack_pending: w.maxInFlight, ack_wait: nanos(NATS_ACK_WAIT_MS), description: w.description };
  let info: ConsumerInfo | undefined;
  try {
    info = await jsm.consumers.info(w.stream, w.durable);
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
  }
  // A work-queue stream takes no consumer but one delivering all (NATS refuses a start time: the
  // trigger never consumed), and what it holds is work no consumer has taken yet (an acked message
  // leaves it): the messages waiting when the trigger is declared are its work too.
  const queue = stream.config.retention === RetentionPolicy.Workqueue;
  const create = (from: Date) =>
    jsm.consumers.add(w.stream, {
      durable_name: w.durable,
      ack_policy: AckPolicy.Explicit,
      ...(queue ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: from.toISOString() }),
      ...settings,
    });
  if (info && !queue && leftBehind(info, w.startTime)) {
    // An earlier trigger of this path and name (removed while paused, or while no server ran):
    // its place in the stream would fire what was published while no trigger existed.
    await jsm.consumers.delete(w.stream, w.durable);
    info = undefined;
  }
  if (!info) {
    await create(w.startTime);
  } else if (info.config.filter_subject !== w.subject || info.config.max_ack_pending !== w.maxInFlight || info.config.ack_wait !== settings.ack_wait || info.config.ack_policy !== AckPolicy.Explicit) {
    try {
      await jsm.consumers.update(w.stream, w.durable, settings);
    } catch (err) {
      if (!(err instanceof JetStreamApiError)) throw err;
      await jsm.consumers.delete(w.stream, w.durable);
      await create(new Date());
    }
  }
  return { streamCreated: stream.created };
}

/** A consumer made for an earlier trigger of the same name: it delivers from before this trigger's first registration. */
function leftBehind(info: ConsumerInfo, startTime: Date): boolean {
  const from = info.config.opt_start_time === undefined ? Number.NaN : Date.parse(info.config.opt_start_time);
  return from < startTime.getTime();
}
