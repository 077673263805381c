// A keychain entry's renew_config is sealed like its token (its headers and data hold client
// secrets, its endpoint may hold a key in its query), yet a malformed one was refused quoting the
// value: `renew_config.headers.Authorization: Invalid type: Expected string but received 12345678`,
// `renew_config.endpoint: Invalid URL: Received "..."`. The 422
// now names each field and what it must be, never the value sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let catalogId = 0;
beforeAll(async () => {
  t = await startTestApp();
  const reg = await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: k, path: audit/renew-echo }\nworkflow:\n  - step: start\n' });
  catalogId = reg.body.catalog_id;
});
afterAll(async () => t?.close());

const store = (renewConfig: unknown) =>
  http(t.url, 'POST', `/api/keychain/${catalogId}/echo`, { token_data: { tok: 'x' }, credential_type: 'http', auto_renew: true, renew_config: renewConfig });

describe("a malformed keychain renew_config's 422", () => {
  it('names each field and what it must be, never the value sent', async () => {
    const res = await store({
      endpoint: 'kc-echo-secret-1',
      method: 424242,
      headers: { Authorization: 987654321, 'X-Api-Key': ['kc-echo-secret-2'] },
      data: 'kc-echo-secret-3',
      token_field: 7,
      ttl_field: '',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail.errors).toEqual([
      'renew_config.endpoint: must be a URL',
      'renew_config.method: must be a non-empty text',
      'renew_config.headers.Authorization: must be a text',
      'renew_config.headers.X-Api-Key: must be a text',
      'renew_config.data: must be a JSON object',
      'renew_config.token_field: must be a non-empty text',
      'renew_config.ttl_field: must be a non-empty text',
    ]);
    const text = JSON.stringify(res.body);
    for (const secret of ['kc-echo-secret-1', 'kc-echo-secret-2', 'kc-echo-secret-3', '987654321', '424242']) expect(text).not.toContain(secret);
    expect((await store({ endpoint: 'not a url kc-echo-secret-4' })).body.detail.errors).toEqual(['renew_config.endpoint: must be a URL']);
    expect((await store('kc-echo-secret-5')).body.detail.errors).toEqual(['renew_config: must be a JSON object']);
    // A URL the worker cannot renew over was stored (201) and failed at every renewal.
    const ftp = await store({ endpoint: 'ftp://kc-echo-secret-6.example/token' });
    expect(ftp.status).toBe(422);
    expect(ftp.body.detail.errors).toEqual(['renew_config.endpoint: must be an http or https URL']);
    expect(JSON.stringify(ftp.body)).not.toContain('kc-echo-secret-6');
    expect(t.logs.join('')).not.toMatch(/kc-echo-secret|987654321/);
  });
});
