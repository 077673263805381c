// `svc gateway revoke SUB` printed its result (how many sessions it ended) as a sentence only:
// every other command that prints data answers --json for programs, and a script ending a
// leaver's sessions had to parse `ended 2 sessions of nora: …` (or `nora has no session`). It
// takes --json now: `{"sub": "nora", "sessions_ended": 2}`, nothing else on stdout.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SessionStore } from '../../../src/gateway/session-store.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import { runSvc } from '../../helpers/process.ts';
import type { Db } from '../../../src/db/db.ts';

let database: TestDatabase & { db: Db };
beforeAll(async () => {
  database = await createMigratedDatabase();
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

it('svc gateway revoke --json prints the sessions it ended as one JSON object', async () => {
  const store = new SessionStore(database.db, 3_600_000, 7_200_000);
  const fields = { name: null, email: null, role: 'viewer' as const, paths: null, idToken: undefined };
  await store.create({ sub: 'nora', ...fields });
  await store.create({ sub: 'nora', ...fields });
  const env = { SVC_DATABASE_URL: database.url, SVC_LOG_LEVEL: 'warn' };
  const run = await runSvc(['gateway', 'revoke', 'nora', '--json'], env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toEqual({ sub: 'nora', sessions_ended: 2 });
  const again = await runSvc(['gateway', 'revoke', '--json', 'nora'], env);
  expect(JSON.parse(again.stdout)).toEqual({ sub: 'nora', sessions_ended: 0 });
  // The sentence stays for a person.
  expect((await runSvc(['gateway', 'revoke', 'nora'], env)).stdout).toBe('nora has no session\n');
}, 60_000);
