// A server started on a database its migrations have not reached says which it applied (an
// upgrade's record in the log, as `svc migrate` prints them), a first start only that it made the
// schema; one started on an up-to-date database says nothing of them.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
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

/** The migration lines a start of `svc server` logged. */
async function migrationLines(env: Record<string, string>): Promise<{ applied?: string[]; current: string; msg: string }[]> {
  const port = await freePort();
  const p = spawnSvc(['server'], { ...env, SVC_PORT: String(port), SVC_HOST: '127.0.0.1', SVC_LOG_LEVEL: 'info' });
  try {
    await waitForHealth(`http://127.0.0.1:${port}/api/health`, 60_000);
  } finally {
    p.kill('SIGTERM');
    await withTimeout(p.exited, 20_000, 'server stop');
  }
  return p.output().split('\n').filter((l) => l.includes('"current":')).map((l) => JSON.parse(l));
}

it('logs the migrations a start applied, that a first start made the schema, and nothing when none applied', async () => {
  const env = { SVC_DATABASE_URL: t.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  const [first] = await migrationLines(env);
  expect(first.applied).toBeUndefined();
  expect(first.msg).toMatch(new RegExp(`^made the database's schema \\(\\d+ migrations, at ${first.current}\\)$`));
  expect(await migrationLines(env)).toEqual([]);
  // As after an upgrade: a migration not applied yet (this one is an UPDATE, safe to apply again).
  const again = '0049_paused_before_0047.sql';
  const c = new pg.Client({ connectionString: t.url });
  await c.connect();
  await c.query('DELETE FROM core.schema_migration WHERE version = $1', [again]);
  await c.end();
  expect(await migrationLines(env)).toEqual([expect.objectContaining({ applied: [again], current: first.current, msg: `applied 1 migration(s), the database is at ${first.current}` })]);
}, 180_000);
