// A server started on a database its migrations have not reached says which it applied (an
// upgrade's record in the log, as `svc migrate` prints them); one started on an up-to-date
// database says nothing of them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, waitForHealth, withTimeout } from '../../helpers/process.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

async function startAndStop(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const p = spawnSvc(['server'], { ...env, SVC_PORT: String(port), SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'info' });
  try {
    await waitForHealth(`http://127.0.0.1:${port}/api/health`, 60_000);
  } finally {
    p.kill('SIGTERM');
    await withTimeout(p.exited, 20_000, 'server stop');
  }
  return p.output();
}

it('logs the migrations a start applied, and none when there were none', async () => {
  const env = { SVC_DATABASE_URL: t.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  const first = await startAndStop(env);
  const line = first.split('\n').find((l) => l.includes('migration(s)'));
  expect(line, first).toBeDefined();
  const logged = JSON.parse(line!) as { applied: string[]; current: string; msg: string };
  expect(logged.applied[0]).toBe('0001_core.sql');
  expect(logged.applied.at(-1)).toBe(logged.current);
  expect(logged.msg).toBe(`applied ${logged.applied.length} migration(s), the database is at ${logged.current}`);
  expect(await startAndStop(env)).not.toContain('migration(s)');
}, 120_000);
