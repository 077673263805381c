// "A retrieved entry that fails its schema logs a warning and is still used": a real server, a
// real worker and a real protected endpoint. The store validates token_data, so a stored entry can
// fail only a schema changed afterwards; the test changes it in the database, as an operator would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;

beforeAll(async () => {
  target = await startHttpTarget();
  s = await startTestStack({ workers: 1, concurrency: 2 });
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const BAD_TOKEN = `schema-bad-token-${Math.random().toString(36).slice(2)}`;
const GOOD_TOKEN = `schema-good-token-${Math.random().toString(36).slice(2)}`;
const HINT_SECRET = 'schema-hint-secret-value';

const PLAYBOOK = () => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcs_read, path: kcs/read }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - name: with_bad
        kind: http
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.bad.access_token }}" }
      - name: with_good
        kind: http
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.good.access_token }}" }
`;

describe('schema check when the worker reads an entry', () => {
  it('warns naming fields and types (never values) and still uses the entry; a passing entry logs nothing', async () => {
    const reg = await s.register(PLAYBOOK());
    const catalogId: number = reg.catalog_id;
    target.issuedTokens.push(BAD_TOKEN, GOOD_TOKEN); // the protected endpoint accepts exactly these
    const schema = { fields: ['access_token', 'hint', 'expires_in'], required: ['access_token'], types: { access_token: 'string', expires_in: 'integer' } };
    for (const [name, token] of [
      ['bad', BAD_TOKEN],
      ['good', GOOD_TOKEN],
    ]) {
      const res = await http(s.url, 'POST', `/api/keychain/${catalogId}/${name}`, {
        token_data: { access_token: token, hint: HINT_SECRET, expires_in: 3600 },
        credential_type: 'bearer',
        schema,
      });
      expect(res.status).toBe(201);
    }
    // Tightened after the store: 'bad' now lacks a field, has a wrong type and two unexpected fields.
    const tightened = { fields: ['access_token'], required: ['access_token', 'scope'], types: { access_token: 'integer' } };
    await s.deps.db.query(`UPDATE core.keychain SET schema = $1 WHERE cache_key = $2`, [JSON.stringify(tightened), `bad:${catalogId}:global`]);

    const id = await s.run('kcs/read');
    const final = await s.wait(id);
    expect(final.status).toBe('completed');
    // Both entries were used as they are: the endpoint saw each token.
    const auth = target.requests.filter((r) => r.path === '/protected').map((r) => r.headers.authorization);
    expect(auth).toEqual([`Bearer ${BAD_TOKEN}`, `Bearer ${GOOD_TOKEN}`]);

    const warnings = s.logs.filter((line) => line.includes('fails its schema'));
    expect(warnings).toHaveLength(1);
    const warning: Json = JSON.parse(warnings[0]);
    expect(warning).toMatchObject({
      level: 40,
      keychain: 'bad',
      execution_id: id,
      msg: "KEYCHAIN: Entry 'bad' fails its schema: Missing required field: scope; Field 'access_token' must be integer, got string; Unexpected fields: hint, expires_in",
    });
    for (const secret of [BAD_TOKEN, GOOD_TOKEN, HINT_SECRET]) expect(warnings[0]).not.toContain(secret);
    expect(s.logs.join('')).not.toContain(BAD_TOKEN);
    expect(s.logs.join('')).not.toContain(HINT_SECRET);
  });
});
