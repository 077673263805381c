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

const named = (o: OtherBusServer, bus: BusKind): string =>
  o.bus === bus && o.nats !== null ? `another NATS: its stream of this database made ${o.nats}` : o.bus === 'nats' || o.bus === 'postgres' ? BUS_NAME[o.bus] : o.bus;
const listed = (others: readonly OtherBusServer[], bus: BusKind): string => others.map((o) => `${o.name} (${named(o, bus)}, beat ${o.silent_seconds} s ago)`).join(', ');

/**
 * Registers this server and its bus on the database and beats for it until the returned stop
 * (which deregisters it). Throws ConfigError (exit 78) naming both buses when a live server uses
 * the other one, or another NATS (`busId`: which NATS this server's is; two NATS servers that are
 * not one cluster carry nothing from one to the other); logs an error when one appears later
 * (registered while this one was silent).
 */
export async function registerServerBus(bus: BusKind, deps: PeriodicDeps, busId?: BusId): Promise<() => Promise<void>> {
  // Host and pid name it for an operator; the suffix keeps two containers' pid 1 apart.
  const name = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const nats = (await busId?.()) ?? null;
  const p = { name, bus, nats, liveSeconds: SERVER_LIVE_SECONDS };
  const others = await deps.db.tx((q) => registerServer(q, p));
  if (others.length) {
    throw new ConfigError(
      `this server's bus is ${BUS_NAME[bus]}${nats === null ? '' : ` (its stream of this database made ${nats})`}, but live servers on this database use another: ${listed(others, bus)}. ` +
        `Servers on one database must use one bus (they do not hear each other): give this one the bus they use (their SVC_NATS_URL, or none as they have none), ` +
        `or, to change the bus, stop them all first (a server killed without stopping counts as live until it has not beaten for ${SERVER_LIVE_SECONDS} s); see docs/scaling.md`,
    );
  }
  deps.log.info({ server: name, bus }, 'server registered with its bus');
  const beats = every(deps, { name: 'server_beat', intervalMs: SERVER_BEAT_MS }, async () => {
    // Read again at each beat: a stream deleted by hand is made again (at another time) by the first server that misses it.
    const late = await beatServer(deps.db, { ...p, nats: (await busId?.()) ?? null });
    if (late.length) deps.log.error({ server: name, bus, others: late }, `live servers on this database use another bus than this one (${BUS_NAME[bus]}): ${listed(late, bus)}; they do not hear each other's work: give every server the same SVC_NATS_URL (one NATS, or one NATS cluster)`);
  });
  return async () => {
    await beats.stop();
    await deregisterServer(deps.db, name);
  };
}
