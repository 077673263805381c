// The routes that give the worker token a secret only for a claim it names in the claim headers
// (src/api/worker-grant.ts) show those headers in the OpenAPI document: a worker written from the
// document alone otherwise meets 403 secret_not_granted with no parameter it could have sent.
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLAIM_HEADERS } from '../../../src/protocol.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const Parameter = v.looseObject({ in: v.string(), name: v.string() });
const OpenApi = v.object({ paths: v.record(v.string(), v.record(v.string(), v.looseObject({ parameters: v.optional(v.array(Parameter)) }))) });
const HANDLE = '00000000-0000-4000-8000-000000000000';

it('documents the claim headers on every route that refuses the worker token without them', async () => {
  const entry = { token_data: { t: 'x' }, credential_type: 'bearer', cache_type: 'secret', scope_type: 'global', ttl_seconds: 60 };
  const asks: { method: 'GET' | 'POST'; route: string; url: string; payload?: object }[] = [
    { method: 'GET', route: '/api/credentials/{name}', url: '/api/credentials/db_auth?include_data=true' },
    { method: 'GET', route: '/api/secrets/{handle}', url: `/api/secrets/${HANDLE}` },
    { method: 'GET', route: '/api/keychain/{catalog_id}/{keychain_name}', url: '/api/keychain/1/api' },
    { method: 'POST', route: '/api/keychain/{catalog_id}/{keychain_name}', url: '/api/keychain/1/api', payload: entry },
    { method: 'GET', route: '/api/worker/service-reader', url: '/api/worker/service-reader' },
  ];
  const doc = v.parse(OpenApi, t.app.swagger());
  const names = Object.values(CLAIM_HEADERS);
  for (const ask of asks) {
    const res = await t.app.inject({ method: ask.method, url: ask.url, headers: asWorker, ...(ask.payload ? { payload: ask.payload } : {}) });
    // What the route asks of a worker: the headers, by name.
    expect(res.statusCode, `${ask.method} ${ask.url}: ${res.body}`).toBe(403);
    expect(res.json().detail.code).toBe('secret_not_granted');
    for (const name of names) expect(res.body, ask.url).toContain(name);
    // What the document tells it.
    const params = doc.paths[ask.route]?.[ask.method.toLowerCase()]?.parameters ?? [];
    expect(params.filter((p) => p.in === 'header').map((p) => p.name), `${ask.method} ${ask.route}`).toEqual(expect.arrayContaining(names));
  }
});
