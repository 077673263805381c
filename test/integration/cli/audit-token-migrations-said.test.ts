// `svc token` works straight in the database and applies pending migrations first, as a start
// does, but said nothing of them: `svc token list` of a newer version, run against a database its
// older servers still serve, upgraded the schema (on a log from before 0023, a copy of every event
// holding the log for minutes) and printed only the list. It now says on stderr what it applied,
// in the server's words, and what a database a newer version migrated has that it does not know.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { runSvc } from '../../helpers/process.ts';

let t: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  t = await createTestDatabase();
  env = { SVC_DATABASE_URL: t.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_LOG_LEVEL: 'info' };
});
afterAll(async () => {
  await t?.drop();
});

async function sql(text: string, values: unknown[] = []): Promise<void> {
  const c = new pg.Client({ connectionString: t.url });
  await c.connect();
  try {
    await c.query(text, values);
  } finally {
    await c.end();
  }
}

const messages = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => String((JSON.parse(l) as { msg: string }).msg));

it('svc token says which migrations it applied, and nothing when there were none', async () => {
  const first = await runSvc(['token', 'list'], env);
  expect(first.code, first.stderr).toBe(0);
  expect(messages(first.stderr)).toEqual([expect.stringMatching(/^made the database's schema \(\d+ migrations, at \d{4}_.+\.sql\)$/)]);

  const again = await runSvc(['token', 'list'], env);
  expect(again.code, again.stderr).toBe(0);
  expect(messages(again.stderr)).toEqual([]);

  // As an older version left it: one migration not applied yet (an UPDATE, safe to apply again).
  await sql(`DELETE FROM core.schema_migration WHERE version = '0049_paused_before_0047.sql'`);
  const upgraded = await runSvc(['token', 'create', '--name', 'ci', '--role', 'operator'], env);
  expect(upgraded.code, upgraded.stderr).toBe(0);
  expect(upgraded.stdout).toMatch(/svc_/);
  expect(messages(upgraded.stderr)).toEqual([expect.stringMatching(/^applied 1 migration\(s\), the database is at \d{4}_.+\.sql$/)]);

  // A database a newer version migrated.
  await sql(`INSERT INTO core.schema_migration (version) VALUES ('9000_from_a_newer_version.sql')`);
  const ahead = await runSvc(['token', 'list'], env);
  expect(ahead.code, ahead.stderr).toBe(0);
  expect(messages(ahead.stderr)).toEqual([expect.stringContaining('the database is ahead of this version: it has 1 migration this version does not know (9000_from_a_newer_version.sql)')]);
}, 120_000);
