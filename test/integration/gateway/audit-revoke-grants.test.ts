// `svc gateway revoke SUB` with the gateway's own database login, the one docs/gateway.md tells
// operators to give the gateway (CONNECT, USAGE on core, and rows of its two tables only): it ends
// the person's sessions as it does with the service's owner login, and changes nothing else.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SessionStore } from '../../../src/gateway/session-store.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import { runSvc } from '../../helpers/process.ts';
import type { Db } from '../../../src/db/db.ts';

async function adminQuery(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

let database: TestDatabase & { db: Db };
let gatewayDbUrl: string;
beforeAll(async () => {
  database = await createMigratedDatabase();
  const role = `svc_gateway_revoke_${randomBytes(4).toString('hex')}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const name = new URL(database.url).pathname.slice(1);
  await adminQuery(inject('adminDatabaseUrl'), `CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
  await adminQuery(
    database.url,
    `GRANT CONNECT ON DATABASE ${name} TO ${role};
     GRANT USAGE ON SCHEMA core TO ${role};
     GRANT SELECT, INSERT, UPDATE, DELETE ON core.gateway_session, core.gateway_login TO ${role};`,
  );
  const u = new URL(database.url);
  u.username = role;
  u.password = password;
  gatewayDbUrl = u.toString();
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

describe('svc gateway revoke with the gateway\'s own login', () => {
  it('ends the person\'s sessions (exit 0), not "permission denied"', async () => {
    const store = new SessionStore(database.db, 3_600_000, 7_200_000);
    const fields = { name: null, email: null, role: 'viewer' as const, paths: null, idToken: undefined };
    const sid = await store.create({ sub: 'rita', ...fields });
    const other = await store.create({ sub: 'otto', ...fields });
    const run = await runSvc(['gateway', 'revoke', 'rita'], { SVC_DATABASE_URL: gatewayDbUrl, SVC_LOG_LEVEL: 'warn' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('ended 1 session of rita');
    expect(await store.touch(sid)).toBeUndefined();
    expect(await store.touch(other)).toMatchObject({ sub: 'otto' });
  }, 60_000);
});
