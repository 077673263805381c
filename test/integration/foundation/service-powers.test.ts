// What the service's database user may do beyond its schemas, as the server reads it at start:
// a superuser everything; a CREATEROLE role before PostgreSQL 16 may grant itself any role but
// superuser (pg_execute_server_program among them), which the server warns of; from 16 it may not.
// CI runs this on the embedded PostgreSQL 18 and again on PostgreSQL 15 (.ci/run).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { servicePowers } from '../../../src/db/service-owner.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let t: TestDatabase;
let client: pg.Client;
const role = `svc_powers_${randomBytes(4).toString('hex')}`;
beforeAll(async () => {
  t = await createTestDatabase();
  client = new pg.Client({ connectionString: t.url });
  await client.connect();
  await client.query(`CREATE ROLE ${role} NOLOGIN CREATEROLE`);
});
afterAll(async () => {
  await client?.query('RESET ROLE').catch(() => {});
  await client?.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
  await client?.end();
  await t?.drop();
});

it('reads a superuser as one, and a CREATEROLE role as able to grant itself any role only before PostgreSQL 16', async () => {
  expect(await servicePowers(client)).toEqual({ superuser: true, grantsAnyRole: false });
  const version = Number((await client.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0].v);
  await client.query(`SET ROLE ${role}`);
  expect(await servicePowers(client)).toEqual({ superuser: false, grantsAnyRole: version < 160000 });
  // What the warning is about, shown: before 16 such a role gives itself a server-program role.
  const granted = await client.query(`GRANT pg_execute_server_program TO ${role}`).then(() => true, () => false);
  expect(granted).toBe(version < 160000);
  await client.query('RESET ROLE');
});
