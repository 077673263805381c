// A database out of disk or memory (SQLSTATE class 53: 53100 disk_full, 53200 out_of_memory, 53000,
// 53400) answered every write 500 `internal`: nothing a caller could act on, though the same
// request passes once the operator has made room. It is now 503 database_unavailable with
// Retry-After, as a database away is, and changes nothing.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let admin: pg.Client;

const PLAYBOOK = (name: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${name}, path: full/${name} }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

beforeAll(async () => {
  t = await startTestApp();
  admin = new pg.Client({ connectionString: t.databaseUrl });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await t?.close();
});

describe('the database out of resources', () => {
  it.each(['53100', '53200', '53000', '53400'])('SQLSTATE %s is a 503 with Retry-After that changes nothing; the same request passes once there is room', async (code) => {
    // What PostgreSQL raises when a write cannot extend a file (53100), or a backend its memory (53200).
    await admin.query(`CREATE OR REPLACE FUNCTION core.audit_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '${code}'; END $$`);
    await admin.query('CREATE TRIGGER audit_full BEFORE INSERT ON core.catalog FOR EACH ROW EXECUTE FUNCTION core.audit_full()');
    const name = `p${code}`;
    try {
      const res = await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK(name) });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(res.body.detail.code).toBe('database_unavailable');
      expect(JSON.stringify(res.body)).not.toMatch(/No space left|extend file/);
    } finally {
      await admin.query('DROP TRIGGER audit_full ON core.catalog');
    }
    expect((await http(t.url, 'GET', `/api/catalog/full/${name}`)).status).toBe(404);
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK(name) })).status).toBeLessThan(300);
  });
});
