import { ServiceError } from '../errors.ts';

// SQLSTATEs that say the server is going away or refusing sessions, not that the statement is
// wrong: admin/crash shutdown, "cannot connect now" (starting up, shutting down, recovering), and
// too many connections. Class 08 (connection exception) counts too, except 08P01: a protocol
// violation is the client's message, and sending it again will not help. 25006 (a write in a
// read-only transaction): the service never opens one itself, so the database takes no writes for
// now (a standby after a failover, default_transaction_read_only while an operator works); the
// connection that said so is discarded, and a later one may reach the primary. 28P01 and 28000
// (the service's login refused: its role's password changed before SVC_DATABASE_URL did, or the
// role lost LOGIN): only a new session is refused so, and the operator's fix, not the request,
// makes the next one work; a 500 was sent again by nobody, and a worker gave its finished
// results up after a few of them. 3D000: the service's database is gone for now (renamed away,
// dropped and made again by a restore); the service's statements never name another database.
const LOGIN_REFUSED_SQLSTATES = new Set(['28P01', '28000', '3D000']);
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '25006', ...LOGIN_REFUSED_SQLSTATES]);

/**
 * True for a refused login (28P01, 28000) or a database that does not exist (3D000): what a new
 * session meets. A statement raises them too (pg_database_size('nope')): that is its own error.
 */
export function isLoginRefused(err: unknown): boolean {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' && LOGIN_REFUSED_SQLSTATES.has(err.code);
}
// 55000 is a broad class ("object not in prerequisite state"); only its refusal of a new session
// (ALTER DATABASE ... ALLOW_CONNECTIONS false, a database being dropped) says the database is away.
const NOT_ACCEPTING = { code: '55000', says: 'is not currently accepting connections' };
// Socket errors reaching the database (ENOENT: its Unix socket is gone while it is stopped).
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// What pg and pg-pool say, without a code, when a connection drops, never comes, or was closed.
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  // pg.Client's own connect bound (a connection of its own, as POST /api/postgres/execute's reader
  // session): the database took the TCP connection and never answered the login (stopped).
  'timeout expired',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  // A statement got no answer within its client-side bound (`query_timeout`: db.ts, the gateway's).
  'Query read timeout',
];

/**
 * True when `err` says the database cannot be reached or is going away (worth retrying later),
 * whether it is pg's own error or one this module already classified.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof ServiceError) return err.code === 'database_unavailable';
  if (err instanceof AggregateError && err.errors.some(isDatabaseUnavailable)) return true; // one error per address tried
  if (!(err instanceof Error)) return false;
  const code = 'code' in err && typeof err.code === 'string' ? err.code : '';
  if (UNAVAILABLE_SQLSTATES.has(code) || (code.startsWith('08') && code !== '08P01')) return true;
  if (code === NOT_ACCEPTING.code && err.message.includes(NOT_ACCEPTING.says)) return true;
  if (UNAVAILABLE_SOCKET_CODES.has(code)) return true;
  if (code === 'ENOENT' && 'syscall' in err && err.syscall === 'connect') return true;
  return UNAVAILABLE_MESSAGES.some((m) => err.message.startsWith(m));
}

// A statement PostgreSQL cancelled: past a statement_timeout or lock_timeout an operator set on
// the service's role or database (a table's lock held by an ALTER TABLE, a VACUUM FULL, a REINDEX),
// or by pg_cancel_backend. It rolled back, and the same request may pass later. Not classified
// by Db: the batch intake and its processors read 57014 as their own deadline (ack_timeout,
// processing_timeout); only the edge answers what reaches it so (cancelledAsUnavailable).
// Likewise a database out of resources (class 53: 53000, disk full 53100, out of memory 53200, a
// configuration limit such as max_locks_per_transaction 53400; 53300 is a refused session, above):
// the statement rolled back, and the same request passes once the operator has made room. Not
// classified by Db either: the session itself still works, and is kept.
const CANCELLED_SQLSTATES = new Set(['57014', '55P03', '53000', '53100', '53200', '53400']);

/**
 * `database_unavailable` for a statement PostgreSQL cancelled (its timeouts, an operator's cancel)
 * or could not run for want of disk or memory, which reached the edge unhandled: a 503 to send
 * again later, not a 500; anything else unchanged.
 */
export function cancelledAsUnavailable(err: unknown): unknown {
  const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : '';
  return CANCELLED_SQLSTATES.has(code) ? new ServiceError('database_unavailable', undefined, { cause: err }) : err;
}

/**
 * The one place pg errors are classified: an error saying the database is away becomes the
 * domain error `database_unavailable` (503 at the edge, the original kept as its cause for the
 * log); anything else is returned unchanged.
 */
export function classifyDatabaseError(err: unknown): unknown {
  if (err instanceof ServiceError || !isDatabaseUnavailable(err)) return err;
  return new ServiceError('database_unavailable', undefined, { cause: err });
}
