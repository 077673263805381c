// SVC_AUTH=token: past SVC_AUTH_FAILURES_PER_MINUTE refused credentials from an address, every
// token not taken within the last minute was refused 429 there, a good one too: a task on this
// host sending made-up tokens from 127.0.0.1 had `svc list` (a real CLI process, a valid token)
// refused. A live token now goes on; made-up, revoked and expired ones still get only 429.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker, bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { insertApiToken, revokeApiToken } from '../../../src/db/api-token.repo.ts';
import { newApiToken } from '../../../src/auth/api-token.ts';

const LIMIT = 5;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token', SVC_AUTH_FAILURES_PER_MINUTE: String(LIMIT) });
}, 60_000);
afterAll(async () => t?.close());

const madeUp = () => bearer(`svc_${randomBytes(32).toString('base64url')}`);
const list = (headers: Record<string, string>) => http(t.url, 'GET', '/api/executions', undefined, headers);

describe("SVC_AUTH=token: another caller's refused tokens from the same address", () => {
  it('do not hold back a live token; made-up, revoked and expired ones still wait', async () => {
    const cli = await createApiToken(t.deps.db, 'cli', 'viewer');
    const revoked = await createApiToken(t.deps.db, 'revoked', 'viewer');
    await revokeApiToken(t.deps.db, 'revoked');
    const old = newApiToken();
    await insertApiToken(t.deps.db, { name: 'expired', role: 'viewer', hash: old.hash, prefix: old.prefix, expires: { inMs: 1 } });

    // The spamming neighbour (the test, from 127.0.0.1, where the CLI connects from too).
    for (let i = 0; i < LIMIT; i++) expect((await list(madeUp())).status).toBe(401);
    expect((await list(madeUp())).status).toBe(429);

    // The CLI, a real process whose token this server never took before.
    const run = await runSvc(['list', '--json'], { SVC_SERVER_URL: t.url, SVC_API_TOKEN: cli });
    expect(run.stderr).not.toContain('429');
    expect(run.code, run.stderr).toBe(0);
    // A token made after the address was limited: served once the server reads its live tokens
    // again (at most once a second, so made-up tokens cost no lookup each).
    const made = await createApiToken(t.deps.db, 'made-later', 'viewer');
    await new Promise((ok) => setTimeout(ok, 1_100));
    expect((await list(bearer(made))).status).toBe(200);
    // The worker token is never limited (a restarting worker registers again).
    expect((await http(t.url, 'POST', '/api/worker/pool/register', { name: 'neighbour-pool', capacity: 1 }, asWorker)).status).toBe(200);

    // Brute force is still limited: anything else is refused 429, telling nothing of the token.
    for (const headers of [madeUp(), madeUp(), bearer(revoked), bearer(old.token), bearer('not-a-token')]) {
      const limited = await list(headers);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
});
