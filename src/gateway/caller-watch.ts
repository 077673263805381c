// The callers of the streams the gateway relays (the inspection WebSocket, server-sent events),
// checked again while a stream lasts: the server checks an API token itself, but it cannot know
// of a session logged out or a bearer JWT past its `exp` (its signed identity assertion is
// checked at the handshake only), so the gateway ends such a stream.
import { watchForLapse } from '../abortable-wait.ts';
import { isDatabaseUnavailable } from '../db/classify-database-error.ts';
import type { Caller } from './caller.ts';
import type { SessionStore } from './session-store.ts';

/** How often a relayed stream's session is read again (a bearer JWT's stream ends at its `exp`), in ms. */
export const GATEWAY_STREAM_CHECK_MS = 2_000;

/** Waits until a stream's caller may no longer be served: why, or undefined once `signal` aborted. */
export type CallerWatch = (signal: AbortSignal) => Promise<string | undefined>;

/** Why `caller` may no longer be served by a stream opened as them, or undefined while they may. */
async function lapseOf(caller: Caller & { kind: 'jwt' | 'session' }, sessions: SessionStore | null): Promise<string | undefined> {
  if (caller.kind === 'jwt') return caller.exp * 1000 <= Date.now() ? 'the bearer token has expired' : undefined;
  return sessions && (await sessions.isLive(caller.sid)) ? undefined : 'the session has ended (logged out, revoked or expired)';
}

/**
 * The watch of a stream opened by `caller`: a session read every GATEWAY_STREAM_CHECK_MS (one
 * statement, not renewing it), a bearer JWT's `exp` awaited; undefined for a caller the gateway
 * has nothing to check of (an API token: the server ends its streams). A read the database cannot
 * answer is tried again at the next.
 */
export function callerWatch(caller: Caller | null, sessions: SessionStore | null): CallerWatch | undefined {
  if (caller?.kind !== 'jwt' && caller?.kind !== 'session') return undefined;
  const interval = (): number =>
    caller.kind === 'jwt' ? Math.min(GATEWAY_STREAM_CHECK_MS, Math.max(0, caller.exp * 1000 - Date.now())) : GATEWAY_STREAM_CHECK_MS;
  return (signal) => watchForLapse(() => lapseOf(caller, sessions), interval, isDatabaseUnavailable, signal);
}
