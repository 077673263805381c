import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ConfigError } from '../config.ts';
import { beatServer, deregisterServer, registerServer, type BusKind, type OtherBusServer } from '../db/server.repo.ts';
import { every, type PeriodicDeps } from '../periodic/every.ts';

// Servers on one database must share one bus: a command announced on NATS never wakes the
// claimers of a server that listens to PostgreSQL, nor the other way round, so work waits for a
// poll or the reaper and nothing says why. A server records its bus where live servers are
// recorded (core.runtime) and refuses to start beside a live server on the other bus.
// Refused, not merely logged: a fleet on two buses is never a state to run in, and a change of
// bus is a stop of every server and a start with the new setting (the database keeps all the
// work meanwhile), not a rolling restart (docs/scaling.md, "One bus per database").

/** How often a server beats (its row's heartbeat_at). */
export const SERVER_BEAT_MS = 10_000;
/** A server silent this long is taken for gone (killed without deregistering): three beats missed. */
export const SERVER_LIVE_SECONDS = 30;

/** The bus `SVC_NATS_URL` chooses. */
export function busKindOf(natsUrl: string | undefined): BusKind {
  return natsUrl ? 'nats' : 'postgres';
}

const BUS_NAME: Record<BusKind, string> = { nats: 'NATS JetStream (SVC_NATS_URL set)', postgres: 'PostgreSQL LISTEN/NOTIFY (no SVC_NATS_URL)' };

/** Which NATS a server's bus is (NatsBus.streamMade), or null: PostgreSQL's bus, or NATS not answering. */
export type BusId = () => Promise<string | null>;

/** Whether `o`, on this server's bus, has another stream (another SVC_NATS_NAMESPACE) than `stream`. */
const otherStream = (o: OtherBusServer, bus: BusKind, stream: string | undefined): boolean => o.bus === bus && o.stream !== null && stream !== undefined && o.stream !== stream;

const named = (o: OtherBusServer, bus: BusKind, stream: string | undefined): string =>
  otherStream(o, bus, stream)
    ? `another stream on NATS: ${o.stream}, of another SVC_NATS_NAMESPACE`
    : o.bus === bus && o.nats !== null
      ? `another NATS: its stream of this database made ${o.nats}`
      : o.bus === 'nats' || o.bus === 'postgres'
        ? BUS_NAME[o.bus]
        : o.bus;
const listed = (others: readonly OtherBusServer[], bus: BusKind, stream: string | undefined): string =>
  others.map((o) => `${o.name} (${named(o, bus, stream)}, beat ${o.silent_seconds} s ago)`).join(', ');

/**
 * Registers this server and its bus on the database and beats for it until the returned stop
 * (which deregisters it). Throws ConfigError (exit 78) naming both buses when a live server uses
 * the other one, or another NATS (`busId`: which NATS this server's is; two NATS servers that are
 * not one cluster carry nothing from one to the other), or another stream on it (`stream`: the
 * NATS stream of this server's SVC_NATS_NAMESPACE); logs an error when one appears later
 * (registered while this one was silent).
 */
export async function registerServerBus(bus: BusKind, deps: PeriodicDeps, busId?: BusId, stream?: string): Promise<() => Promise<void>> {
  // Host and pid name it for an operator; the suffix keeps two containers' pid 1 apart.
  const name = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  let p = { name, bus, nats: (await busId?.()) ?? null, stream: stream ?? null, liveSeconds: SERVER_LIVE_SECONDS };
  let others = await deps.db.tx((q) => registerServer(q, p));
  // Only another time of the stream (same bus, same stream name): the stream may have been made
  // again on this same NATS (deleted by an operator, or a NATS that lost its store), which the
  // live servers record at their next beat. A start within that beat was refused as "another
  // NATS"; it now waits a beat and looks again, so only a NATS that is really another is refused
  // (a beat later). Another stream name is another namespace, which no beat changes.
  if (others.length && others.every((o) => o.bus === bus && o.nats !== null && !otherStream(o, bus, stream))) {
    await new Promise((r) => setTimeout(r, SERVER_BEAT_MS + 1_000));
    p = { ...p, nats: (await busId?.()) ?? null };
    others = await deps.db.tx((q) => registerServer(q, p));
  }
  const nats = p.nats;
  if (others.length) {
    const mine = stream === undefined ? '' : ` ${stream}`;
    const namespaced = others.some((o) => otherStream(o, bus, stream));
    throw new ConfigError(
      `this server's bus is ${BUS_NAME[bus]}${nats === null ? '' : ` (its stream${mine} of this database made ${nats})`}, but live servers on this database use another: ${listed(others, bus, stream)}. ` +
        `Servers on one database must use one bus (they do not hear each other): give this one the bus they use (their SVC_NATS_URL${namespaced ? ' and SVC_NATS_NAMESPACE' : ''}, or none as they have none), ` +
        `or, to change the bus, stop them all first (a server killed without stopping counts as live until it has not beaten for ${SERVER_LIVE_SECONDS} s); see docs/scaling.md`,
    );
  }
  deps.log.info({ server: name, bus }, 'server registered with its bus');
  // Servers seen on another bus at the previous beat: one is named only when seen at two beats in
  // a row, since a stream made again shows the others' old time until their own next beat.
  let seen = new Set<string>();
  const beats = every(deps, { name: 'server_beat', intervalMs: SERVER_BEAT_MS }, async () => {
    // Read again at each beat: a stream deleted by hand is made again (at another time) by the first server that misses it.
    const found = await beatServer(deps.db, { ...p, nats: (await busId?.()) ?? null });
    const late = found.filter((o) => o.bus !== bus || seen.has(o.name));
    seen = new Set(found.map((o) => o.name));
    if (late.length) deps.log.error({ server: name, bus, others: late }, `live servers on this database use another bus than this one (${BUS_NAME[bus]}): ${listed(late, bus, stream)}; they do not hear each other's work: give every server the same SVC_NATS_URL (one NATS, or one NATS cluster) and SVC_NATS_NAMESPACE`);
  });
  return async () => {
    await beats.stop();
    await deregisterServer(deps.db, name);
  };
}
