// A server given a database but no sealing key is a configuration error like any other: exit 78
// (EX_CONFIG) and one line naming SVC_ENCRYPTION_KEY, as a missing SVC_WORKER_TOKEN is; it was 1,
// which a supervisor takes for a crash to restart rather than a setting to fix.
import { expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';

it('a server with SVC_DATABASE_URL and no SVC_ENCRYPTION_KEY exits 78, naming the variable', async () => {
  // Nothing listens there: the key is refused before any connection is tried.
  const p = spawnSvc(['server'], { SVC_DATABASE_URL: `postgres://svc:pw@127.0.0.1:${await freePort()}/svc`, SVC_PORT: String(await freePort()) });
  const code = await withTimeout(p.exited, 60_000, 'svc server');
  expect(code, p.output()).toBe(78);
  expect(p.output()).toMatch(/^svc server: SVC_ENCRYPTION_KEY is required when SVC_DATABASE_URL is set/m);
});
