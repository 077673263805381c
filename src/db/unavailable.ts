// SQLSTATEs of a database that is away rather than of a bad statement: connection exceptions
// (class 08) and these: shutting down, starting up, too many connections, not accepting them.
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '55000']);
// Socket errors of a server that cannot be reached.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EAI_AGAIN']);
// What node-postgres says when a connection drops or cannot be had in time (no code of its own).
const UNAVAILABLE_MESSAGES = /connection terminated|connection timeout|timeout exceeded when trying to connect|client has encountered a connection error|not queryable/i;

/** True when `err` says the database is away (down, restarting, unreachable), so trying again later may succeed. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  if (code && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNREACHABLE_CODES.has(code))) return true;
  return UNAVAILABLE_MESSAGES.test(err.message);
}
