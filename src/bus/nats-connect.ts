import { AuthorizationError, connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../log.ts';
import type { NatsBusTarget } from './nats-target.ts';

// How the bus reaches NATS from SVC_NATS_URL. nats.js ignores a login written in a server URL
// (nats://user:password@host, nats://token@host) and reads `tls://` as plain TCP unless asked for
// TLS, so the URL is taken apart (src/bus/nats-target.ts): the servers as host:port (all that is
// ever logged: the login never appears in a log line or error), TLS, and the login as connect()
// options.

const CONNECT_TIMEOUT_MS = 5_000;
export const RECONNECT_WAIT_MS = 250;
/**
 * How long a start waits for NATS before it fails, as a start fails when PostgreSQL does not
 * answer: a service manager restarts it, and meanwhile it neither hangs silently nor ignores a
 * stop (a first SIGTERM only ends the start of an embedded database).
 */
export const NATS_START_WAIT_MS = 10_000;
const START_RETRY_MS = 250;

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Connects the bus to `target`, reconnecting for ever once connected (through refused logins
 * too). A start waits at most `waitMs` for a server to answer (logging once that it waits), then
 * fails naming the servers; a login refused at the start fails it at once (waiting would not
 * change it, and the operator is there to see it).
 */
export async function connectNatsBus(target: NatsBusTarget, log: Logger, waitMs = NATS_START_WAIT_MS): Promise<NatsConnection> {
  const where = target.servers.join(', ');
  const deadline = performance.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await connect({
        servers: target.servers,
        ...(target.tls ? { tls: {} } : {}),
        ...(target.login.user !== undefined ? { user: target.login.user, pass: target.login.pass } : {}),
        ...(target.login.token !== undefined ? { token: target.login.token } : {}),
        name: 'svc server bus',
        timeout: CONNECT_TIMEOUT_MS,
        maxReconnectAttempts: -1,
        reconnectTimeWait: RECONNECT_WAIT_MS,
        // nats.js closes the connection for good when a reconnect's login is refused twice in a
        // row, leaving a running server deaf to NATS until restarted, though the refusal may end
        // (a password rotated back, an account's credentials reissued, an auth service back).
        // Tried again as any lost connection is; a first connect still fails at a refusal.
        ignoreAuthErrorAbort: true,
      });
    } catch (err) {
      if (err instanceof AuthorizationError) throw new Error(`NATS at ${where} (SVC_NATS_URL) refused the bus's login: ${reason(err)}`);
      if (performance.now() >= deadline) throw new Error(`NATS at ${where} (SVC_NATS_URL) did not answer within ${Math.round(waitMs / 1000)} s: ${reason(err)}`);
      if (attempt === 0) log.warn({ servers: target.servers, err: reason(err) }, `bus: NATS at ${where} not reachable yet; waiting up to ${Math.round(waitMs / 1000)} s`);
      await new Promise((r) => setTimeout(r, START_RETRY_MS));
    }
  }
}
