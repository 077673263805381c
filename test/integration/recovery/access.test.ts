// Who may call the recovery routes when the server checks callers (SVC_AUTH=token): the cleanup
// is an operator's, the reaper nudge an admin's; refusals carry only `detail` and change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker, bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
const tokens: Record<string, string> = {};
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
  for (const role of ['viewer', 'operator', 'admin'] as const) tokens[role] = await createApiToken(t.deps.db, `recovery-${role}`, role);
});
afterAll(async () => t?.close());

describe('recovery routes, access', () => {
  it('POST /api/admin/command_reaper/sweep: admin only', async () => {
    const nudge = (headers: Record<string, string>) => http(t.url, 'POST', '/api/admin/command_reaper/sweep', undefined, headers);
    expect((await nudge({})).status).toBe(401);
    for (const who of [bearer(tokens.viewer), bearer(tokens.operator)]) {
      const r = await nudge(who);
      expect(r.status).toBe(403);
      expect(Object.keys(r.body)).toEqual(['detail']);
    }
    // The worker token is no API token: it opens worker routes only.
    expect((await nudge(asWorker)).status).toBe(401);
    expect((await t.deps.metrics.reaperSweeps.get()).values).toEqual([]);
    const ok = await nudge(bearer(tokens.admin));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'ok', scanned: 0, republished: 0 });
  });

  it('POST /api/executions/cleanup: operator and admin', async () => {
    const cleanup = (headers: Record<string, string>) => http(t.url, 'POST', '/api/executions/cleanup', { dry_run: true }, headers);
    expect((await cleanup({})).status).toBe(401);
    expect((await cleanup(bearer(tokens.viewer))).status).toBe(403);
    expect((await cleanup(asWorker)).status).toBe(401);
    for (const role of ['operator', 'admin']) expect((await cleanup(bearer(tokens[role]))).body).toMatchObject({ cancelled_count: 0, execution_ids: [] });
  });
});
