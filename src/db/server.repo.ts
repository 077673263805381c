import type { Queryable } from './queryable.ts';

// The servers on one database and the bus each uses (`core.runtime`, kind 'server', the bus in
// `labels.bus`): servers on two buses do not hear each other, so a server refuses to start beside
// live servers on another (src/bus/server-bus.ts). A server is live while it beats.

/** The bus a server carries its notifications on: NATS JetStream or PostgreSQL LISTEN/NOTIFY. */
export type BusKind = 'nats' | 'postgres';

/**
 * A live server on another bus than the one asked about; `silent_seconds`: since its last beat.
 * `nats`: when the stream of its NATS was made (labels.nats), null when not recorded; `stream`:
 * that stream's name (labels.stream, SVC_NATS_NAMESPACE's), null when not recorded.
 */
export type OtherBusServer = { name: string; bus: string; nats: string | null; stream: string | null; silent_seconds: number };

/**
 * What a server records of its bus: the kind, and for NATS which one (null: not known yet) and
 * the stream of its deployment there (servers of two namespaces on one NATS do not hear each other).
 */
export type ServerBus = { bus: BusKind; nats?: string | null; stream?: string | null };

// Servers registering at once take turns, so two starting on different buses cannot both find
// no other: the second finds the first.
const REGISTER_LOCK = `SELECT pg_advisory_xact_lock(hashtext('svc:server-bus'))`;

// Another bus: the other kind, or another NATS or stream (both recorded, and not the same: a
// server that recorded none, of a version before, or with its NATS away, is not taken for another).
const OTHER_BUS = `SELECT name, COALESCE(labels->>'bus', 'unknown') AS bus, labels->>'nats' AS nats, labels->>'stream' AS stream,
                          floor(extract(epoch FROM now() - heartbeat_at))::int AS silent_seconds
                     FROM core.runtime
                    WHERE kind = 'server' AND name <> $1 AND status <> 'stopped' AND heartbeat_at >= now() - make_interval(secs => $3::float8)
                      AND (labels->>'bus' IS DISTINCT FROM $2 OR labels->>'nats' <> $4::text OR labels->>'stream' <> $5::text)
                    ORDER BY name`;

// A beat that does not know its NATS now keeps what was recorded.
const UPSERT = `INSERT INTO core.runtime (kind, name, status, labels, heartbeat_at)
                VALUES ('server', $1, 'ready', jsonb_strip_nulls(jsonb_build_object('bus', $2::text, 'nats', $3::text, 'stream', $4::text)), now())
                ON CONFLICT (kind, name) DO UPDATE SET status = 'ready', heartbeat_at = now(),
                  labels = EXCLUDED.labels || CASE WHEN $3::text IS NULL AND core.runtime.labels ? 'nats' THEN jsonb_build_object('nats', core.runtime.labels->'nats') ELSE '{}' END`;

/**
 * Records server `name` as live on its bus, unless a server on another bus (or another NATS) beat
 * within `liveSeconds`: then nothing is written and those servers are returned. Call inside a
 * transaction (`Db.tx`): registrations take turns. Rows silent for longer go first.
 */
export async function registerServer(q: Queryable, p: { name: string; liveSeconds: number } & ServerBus): Promise<OtherBusServer[]> {
  await q.query(REGISTER_LOCK);
  await q.query(`DELETE FROM core.runtime WHERE kind = 'server' AND heartbeat_at < now() - make_interval(secs => $1::float8)`, [p.liveSeconds]);
  const { rows } = await q.query<OtherBusServer>(OTHER_BUS, [p.name, p.bus, p.liveSeconds, p.nats ?? null, p.stream ?? null]);
  if (rows.length === 0) await q.query(UPSERT, [p.name, p.bus, p.nats ?? null, p.stream ?? null]);
  return rows;
}

/**
 * A registered server's beat: it is live for `liveSeconds` more (its row written again if it was
 * taken for gone); returns the live servers on another bus (none unless one registered while
 * this one was silent).
 */
export async function beatServer(q: Queryable, p: { name: string; liveSeconds: number } & ServerBus): Promise<OtherBusServer[]> {
  await q.query(UPSERT, [p.name, p.bus, p.nats ?? null, p.stream ?? null]);
  const { rows } = await q.query<OtherBusServer>(OTHER_BUS, [p.name, p.bus, p.liveSeconds, p.nats ?? null, p.stream ?? null]);
  return rows;
}

/** A server that stops is no longer live: its row goes. */
export async function deregisterServer(q: Queryable, name: string): Promise<void> {
  await q.query(`DELETE FROM core.runtime WHERE kind = 'server' AND name = $1`, [name]);
}

