// A keychain entry's renew_config whose method or headers fetch cannot send was stored (201): a
// method of '../', 'GET POST' or 'CONNECT', a header name 'x y', a value with a line break. The
// worker's renewal then failed at every attempt in fetch's words ("'../' is not a valid HTTP
// method", a TypeError quoting the header value, which may be a secret), an hour after the store
// said nothing. Each is refused at the store, naming the field and not quoting the value;
// nothing is stored. Found by foundation/openapi-refusals.test.ts.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
let catalogId = 0;
beforeAll(async () => {
  t = await startTestApp();
  const reg = await http(t.url, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: k, path: audit/renew-request }\nworkflow:\n  - step: start\n' });
  expect(reg.status).toBe(201);
  catalogId = reg.body.catalog_id;
});
afterAll(async () => t?.close());

const store = (name: string, renewConfig: Record<string, unknown>) =>
  http(t.url, 'POST', `/api/keychain/${catalogId}/${name}`, { token_data: { tok: 'x' }, credential_type: 'http', auto_renew: true, renew_config: { endpoint: 'https://auth.example/token', ...renewConfig } });

it('refuses a method or header fetch cannot send, naming the field, quoting nothing, storing nothing', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ method: '../' }, 'renew_config.method'],
    [{ method: 'GET POST' }, 'renew_config.method'],
    [{ method: 'CONNECT' }, 'renew_config.method'],
    [{ headers: { 'x y': 'v' } }, 'renew_config.headers'],
    [{ headers: { authorization: 'Bearer kc-secret-value\r\nx-evil: 1' } }, 'renew_config.headers.authorization'],
    [{ headers: { authorization: 'Bearer kc-secret-välue-\u2028' } }, 'renew_config.headers.authorization'],
  ];
  for (const [i, [renewConfig, field]] of cases.entries()) {
    const res = await store(`bad${i}`, renewConfig);
    expect(res.status, `${JSON.stringify(renewConfig)}: ${JSON.stringify(res.body)}`).toBe(422);
    expect(res.body.detail.errors.join('\n')).toContain(`${field}: must be`);
    expect(JSON.stringify(res.body)).not.toContain('kc-secret');
    expect((await http(t.url, 'GET', `/api/keychain/${catalogId}/bad${i}`)).body.status).toBe('not_found');
  }
  // What fetch sends, in any case: stored.
  for (const [i, method] of ['get', 'POST', 'Put', 'PATCH', 'DELETE', 'options', 'HEAD'].entries()) {
    const res = await store(`good${i}`, { method, headers: { 'x-api-key': 'v-1', accept: 'application/json' } });
    expect(res.status, `${method}: ${JSON.stringify(res.body)}`).toBe(201);
  }
});
