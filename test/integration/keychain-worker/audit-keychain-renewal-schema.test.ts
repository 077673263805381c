// An entry stored through the API with a schema, renewed by the worker (no definition in the
// playbook, renew_config from the entry): the renewed entry keeps its schema, as it keeps its
// credential_type, so later reads still check token_data against it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;
let renewals = 0;

beforeAll(async () => {
  target = await startHttpTarget((req, res) => {
    const url = new URL(req.url ?? '/', 'http://target');
    if (url.pathname === '/renew') {
      renewals++;
      const token = `renewed-${renewals}-${Math.random().toString(36).slice(2)}`;
      target.issuedTokens.push(token);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: 3600 }));
    }
  });
  s = await startTestStack({ workers: 1, concurrency: 2 });
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

describe('a keychain entry with a schema, renewed by the worker', () => {
  it('keeps its schema after the renewal', async () => {
    const reg = await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: kc_renew_schema, path: kc/renew_schema }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.api.access_token }}" }
`);
    const catalogId = reg.catalog_id;
    const schema = { fields: ['access_token', 'expires_in'], required: ['access_token'], types: { access_token: 'string', expires_in: 'integer' } };
    const stored = await http(s.url, 'POST', `/api/keychain/${catalogId}/api`, {
      token_data: { access_token: 'old-token', expires_in: 1 },
      credential_type: 'oauth2',
      expires_at: '2000-01-01T00:00:00Z',
      auto_renew: true,
      renew_config: { endpoint: `${target.url}/renew` },
      schema,
    });
    expect(stored.status).toBe(201);

    const id = await s.run('kc/renew_schema');
    expect((await s.wait(id)).status).toBe('completed');
    expect(renewals).toBe(1);

    const read = await http(s.url, 'GET', `/api/keychain/${catalogId}/api`);
    expect(read.body).toMatchObject({ status: 'success', credential_type: 'oauth2', auto_renew: true, schema });
    expect(read.body.token_data.access_token).toBe(target.issuedTokens.at(-1));
  });

  it('renews an entry stored before misspelt schema fields were refused, its schema kept as it was', async () => {
    const reg = await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: kc_renew_legacy_schema, path: kc/renew_legacy_schema }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.legacy.access_token }}" }
`);
    const catalogId = reg.catalog_id;
    const stored = await http(s.url, 'POST', `/api/keychain/${catalogId}/legacy`, {
      token_data: { access_token: 'old-token' },
      credential_type: 'oauth2',
      expires_at: '2000-01-01T00:00:00Z',
      auto_renew: true,
      renew_config: { endpoint: `${target.url}/renew` },
      schema: { required: ['access_token'] },
    });
    expect(stored.status).toBe(201);
    // What a store before the check left (POST /api/keychain refuses it now): the renewer stores it again.
    const legacy = { requird: ['access_token'] };
    await s.deps.db.query('UPDATE core.keychain SET schema = $1 WHERE cache_key = $2', [JSON.stringify(legacy), `legacy:${catalogId}:global`]);

    const before = renewals;
    const id = await s.run('kc/renew_legacy_schema');
    expect((await s.wait(id)).status).toBe('completed');
    expect(renewals).toBe(before + 1);
    const read = await http(s.url, 'GET', `/api/keychain/${catalogId}/legacy`);
    expect(read.body).toMatchObject({ status: 'success', schema: legacy });
    expect(read.body.token_data.access_token).toBe(target.issuedTokens.at(-1));
  });
});
