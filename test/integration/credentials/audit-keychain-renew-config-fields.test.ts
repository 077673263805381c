// A keychain entry's renew_config says how the worker renews it: a misspelt field there (token_feild,
// ttl_feild, endpiont) was dropped, so the renewal read the default field (access_token, expires_in)
// and failed, or expired later, an hour after the store said nothing. It is refused as the entry's
// own misspelt fields are (docs/operations.md, What the API refuses), naming it, nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let catalogId = 0;
beforeAll(async () => {
  t = await startTestApp();
  const reg = await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: k, path: audit/renew-config }\nworkflow:\n  - step: start\n' });
  expect(reg.status).toBe(201);
  catalogId = reg.body.catalog_id;
});
afterAll(async () => t?.close());

const store = (name: string, renewConfig: Record<string, unknown>) =>
  http(t.url, 'POST', `/api/keychain/${catalogId}/${name}`, { token_data: { tok: 'kc-renew-secret' }, credential_type: 'http', auto_renew: true, renew_config: renewConfig });

describe("a keychain entry's renew_config", () => {
  it('refuses a misspelt field naming it (did you mean), and stores nothing', async () => {
    for (const [field, meant] of [['token_feild', 'token_field'], ['ttl_feild', 'ttl_field'], ['header', 'headers']] as const) {
      const res = await store(`typo_${meant}`, { endpoint: 'https://auth.example/token', [field]: 'tok' });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail.errors).toEqual([`renew_config.${field}: unknown field (did you mean '${meant}'?)`]);
      expect((await http(t.url, 'GET', `/api/keychain/${catalogId}/typo_${meant}`)).body.status).toBe('not_found');
    }
  });

  it('takes every field the spec lists, and gives them back on an expired read', async () => {
    const renewConfig = { endpoint: 'https://auth.example/token', method: 'POST', headers: { accept: 'application/json' }, data: { grant_type: 'x' }, token_field: 'tok', ttl_field: 'life' };
    const res = await http(t.url, 'POST', `/api/keychain/${catalogId}/whole`, {
      token_data: { tok: 'kc-renew-secret' },
      credential_type: 'http',
      auto_renew: true,
      renew_config: renewConfig,
      expires_at: '2000-01-01T00:00:00Z',
    });
    expect(res.status).toBe(201);
    const read = await http(t.url, 'GET', `/api/keychain/${catalogId}/whole`);
    expect(read.body).toMatchObject({ status: 'expired', renew_config: renewConfig });
  });
});
