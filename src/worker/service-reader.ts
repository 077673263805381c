import * as v from 'valibot';
import { withDatabaseLogin } from '../database-login.ts';
import { readsServiceDatabase } from '../dsl/reads-service-database.ts';
import type { Logger } from '../log.ts';
import type { PresentedCommand } from '../protocol.ts';
import { claimHeaders } from './claim-headers.ts';
import { ServerError, type ServerClient } from './server-client.ts';

const loginAnswer = v.object({ user: v.pipe(v.string(), v.minLength(1)), password: v.pipe(v.string(), v.minLength(1)) });
// A login is asked again after this long: a server started with another key has another password.
const LOGIN_KEPT_MS = 10 * 60_000;

/**
 * The service database as its reader role for a command's `read_only` tasks; undefined when it has
 * none or the server gives none. `renew`: the database refused the login kept, ask the server again.
 */
export type ServiceReaderSource = (command: PresentedCommand, signal?: AbortSignal, opts?: { renew?: boolean }) => Promise<string | undefined>;

/**
 * For a `svc worker` pool (SVC_ALLOW_SERVICE_DB_TASKS): asks the server for the reader role's
 * login (GET /api/worker/service-reader, for a command the pool holds) when a command first needs
 * it, keeps it in memory only, and puts it in `databaseUrl` (the service database as this worker
 * reaches it). Never hands out `databaseUrl`'s own user: without a login, such tasks fail.
 */
export function serviceReaderSource(client: ServerClient, workerId: string, databaseUrl: string, log: Logger): ServiceReaderSource {
  let remembered: { url: string; until: number } | undefined;
  // Commands that start together share one request.
  let asking: Promise<string | undefined> | undefined;
  const ask = async (command: PresentedCommand, signal?: AbortSignal): Promise<string | undefined> => {
    try {
      const answer = await client.request<unknown>('GET', '/api/worker/service-reader', undefined, signal, { headers: claimHeaders(command, workerId) });
      const login = v.parse(loginAnswer, answer);
      remembered = { url: withDatabaseLogin(databaseUrl, login.user, login.password), until: Date.now() + LOGIN_KEPT_MS };
      return remembered.url;
    } catch (err) {
      log.warn({ command_id: command.command_id, status: err instanceof ServerError ? err.status : undefined }, 'the server gave no service database reader login: read_only postgres tasks without auth fail');
      return undefined;
    }
  };
  return async (command, signal, opts = {}) => {
    if (!command.tasks.some(readsServiceDatabase)) return undefined;
    // The password follows the server's current encryption key: a server restarted with a rotated
    // key (or another server of a rolling restart) has set another one since this login was given.
    if (opts.renew) remembered = undefined;
    if (remembered && remembered.until > Date.now()) return remembered.url;
    if (!asking) {
      asking = ask(command, signal).finally(() => (asking = undefined));
      return asking;
    }
    // Another command's request: refused for it (not held any more, say) need not mean for this one.
    return (await asking) ?? ask(command, signal);
  };
}
