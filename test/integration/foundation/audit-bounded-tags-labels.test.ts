// A credential's `tags` and a worker pool's `labels` had no item limit: 400,000 tags were taken
// and stored, and answered with every list of credentials (pools likewise). Both are now bounded
// as an execution's labels are, 20 items (MAX_CREDENTIAL_TAGS, MAX_LABELS), refused 422 naming
// the field, nothing stored. Found by the bad-input audit (helper).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const refused = (res: { status: number; body: Json }, error: string) => {
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(422);
  expect(res.body.detail?.errors).toEqual([error]);
};
const tags = (n: number) => Array.from({ length: n }, (_, i) => `tag${i}`);
const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

describe('credential tags', () => {
  it('over 20 are refused naming tags, on every write, and nothing is stored', async () => {
    const body = { name: 'many_tags', type: 'bearer', data: { token: 'x' } };
    refused(await http(t.url, 'POST', '/api/credentials', { ...body, tags: tags(21) }), 'tags: must hold at most 20 tags');
    refused(await http(t.url, 'POST', '/api/credentials', { ...body, tags: tags(5000) }), 'tags: must hold at most 20 tags');
    expect((await http(t.url, 'GET', '/api/credentials/many_tags')).status).toBe(404);

    expect((await http(t.url, 'POST', '/api/credentials', { ...body, tags: tags(20) })).status).toBe(201);
    refused(await http(t.url, 'PUT', '/api/credentials/many_tags', { data: { token: 'y' }, tags: tags(21) }), 'tags: must hold at most 20 tags');
    refused(await http(t.url, 'PATCH', '/api/credentials/many_tags', { tags: tags(21) }), 'tags: must hold at most 20 tags');
    expect((await http(t.url, 'GET', '/api/credentials/many_tags')).body.tags).toEqual(tags(20));
  });
});

describe('worker pool labels', () => {
  it('over 20 are refused naming labels, and no pool is registered', async () => {
    refused(await http(t.url, 'POST', '/api/worker/pool/register', { name: 'pool-many', labels: labels(21) }, asWorker), 'labels: must hold at most 20 labels');
    refused(await http(t.url, 'POST', '/api/worker/pool/register', { name: 'pool-many', labels: labels(5000) }, asWorker), 'labels: must hold at most 20 labels');
    const pools = (await http(t.url, 'GET', '/api/worker/pools')).body.pools as Json[];
    expect(pools.map((p) => p.name)).not.toContain('pool-many');

    expect((await http(t.url, 'POST', '/api/worker/pool/register', { name: 'pool-many', labels: labels(20) }, asWorker)).status).toBe(200);
    const pool = ((await http(t.url, 'GET', '/api/worker/pools')).body.pools as Json[]).find((p) => p.name === 'pool-many');
    expect(pool?.labels).toEqual(labels(20));
  });
});
