// Credentials of test servers: one worker token for every test server and `svc` process (the
// servers the helpers start take it, their workers present it), and API tokens.
import { newApiToken } from '../../src/auth/api-token.ts';
import type { Role } from '../../src/auth/roles.ts';
import { insertApiToken } from '../../src/db/api-token.repo.ts';
import type { Queryable } from '../../src/db/queryable.ts';

/** SVC_WORKER_TOKEN of test servers and of the `svc` processes tests spawn. */
export const TEST_WORKER_TOKEN = 'test-worker-token-0123456789abcdefghijklmnopqrstuvwxyz';

/** Headers of a request with `Authorization: Bearer <token>`. */
export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Headers of a request as a worker (the test worker token). */
export const asWorker: Record<string, string> = bearer(TEST_WORKER_TOKEN);

/** Makes an API token in the server's database (as `svc token create` does); returns the token. */
export async function createApiToken(db: Queryable, name: string, role: Role): Promise<string> {
  const made = newApiToken();
  if (!(await insertApiToken(db, { name, role, hash: made.hash, prefix: made.prefix }))) throw new Error(`token name ${name} taken`);
  return made.token;
}
