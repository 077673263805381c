import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { createKeyring } from '../../../src/crypto/keyring.ts';
import { PlaybookCache } from '../../../actors/playbook-cache.ts';
import { HotSnapshots } from '../../../actors/hot-snapshots.ts';
import { KeyRooms } from '../../../actors/key-rooms.ts';
import { ParkedClaims } from '../../../actors/parked-claims.ts';
import { createLocalBus } from '../../../src/bus/command-bus.ts';
import { Db } from '../../../src/db/db.ts';
import { freePort } from '../../helpers/ports.ts';
import { createLogger } from '../../../src/log.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { TEST_WORKER_TOKEN } from '../../helpers/auth.ts';
import { BatchWake } from '../../../actors/batch-wake.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import type { Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('HTTP host', () => {
  it('serves health on /health and /api/health', async () => {
    for (const path of ['/health', '/api/health']) {
      const res = await fetch(t.url + path);
      expect(res.status).toBe(200);
      expect((await res.json()) as Json).toMatchObject({ status: 'ok' });
    }
  });

  it('reports 503 and a non-ok status when the database is unreachable', async () => {
    const port = await freePort();
    const config = loadConfig({ SVC_LOG_LEVEL: 'silent' });
    const db = new Db(`postgres://nobody@127.0.0.1:${port}/none`, 1);
    const app = await buildApp({ config, db, log: createLogger('silent'), metrics: createMetrics(), keyring: createKeyring(randomBytes(32), []), cache: new PlaybookCache(), snapshots: new HotSnapshots(), rooms: new KeyRooms(db), parked: new ParkedClaims(), bus: createLocalBus(), workerToken: TEST_WORKER_TOKEN, batchWake: new BatchWake() });
    const res = await app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(503);
    expect((res.json() as Json).status).not.toBe('ok');
    await app.close();
    await db.close();
  });

  it('exposes every svc_ metric the spec names, plus process metrics', async () => {
    const res = await fetch(t.url + '/metrics');
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const name of [
      'svc_batch_enqueue_latency_seconds_sum',
      'svc_batch_enqueue_latency_seconds_count',
      'svc_batch_ack_timeout_total',
      'svc_batch_queue_depth',
      'svc_batch_first_worker_claim_latency_seconds_sum',
      'svc_batch_first_worker_claim_latency_seconds_count',
      'process_resident_memory_bytes',
    ]) {
      expect(text).toContain(name);
    }
  });

  it('serves the OpenAPI document, Swagger UI at /docs and ReDoc at /redoc with local assets only', async () => {
    const spec: Json = await (await fetch(t.url + '/docs/json')).json();
    expect(spec.openapi).toMatch(/^3\./);
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/api/catalog/playbook', '/api/health']));
    // The body schema in the document is the one generated from the valibot schema.
    const post = spec.paths['/api/catalog/playbook'].post;
    expect(JSON.stringify(post.requestBody)).toContain('content');

    const docs = await fetch(t.url + '/docs/');
    expect(docs.status).toBe(200);
    const docsHtml = await docs.text();
    expect(docsHtml).toContain('swagger');
    expect(docsHtml).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.[a-z]{2,}\/[^"']*\.(js|css)/i);

    const redoc = await fetch(t.url + '/redoc');
    const redocHtml = await redoc.text();
    expect(redoc.status).toBe(200);
    expect(redocHtml).toContain('/redoc/redoc.standalone.js');
    expect(redocHtml).not.toMatch(/src="https?:/);
    const bundle = await fetch(t.url + '/redoc/redoc.standalone.js');
    expect(bundle.status).toBe(200);
    const bundleText = await bundle.text();
    expect(bundleText.length).toBeGreaterThan(100_000);
    // The footer logo is served here, not from ReDoc's CDN (scripts/check-docs.ts checks the rendered page).
    expect(bundleText).not.toContain('cdn.redoc.ly');
    expect((await fetch(t.url + '/redoc/logo-mini.svg')).status).toBe(200);
  });

  it('answers unknown routes, bad JSON, wrong shapes and huge bodies with a detail and no stack', async () => {
    const unknown = await fetch(t.url + '/api/nope');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Json).detail).toMatch(/route not found/);

    const badJson = await fetch(t.url + '/api/catalog/playbook', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"content": ' });
    expect(badJson.status).toBe(400);
    const badJsonBody = await badJson.text();
    expect(JSON.parse(badJsonBody).detail).toBeTruthy();
    expect(badJsonBody).not.toMatch(/at .*\.(ts|js):\d+/);

    const shape = await fetch(t.url + '/api/catalog/playbook', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 42 }) });
    expect(shape.status).toBe(422);
    expect(((await shape.json()) as Json).detail.errors[0]).toMatch(/content/);

    const huge = await fetch(t.url + '/api/catalog/playbook', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'x'.repeat(9 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as Json).detail).toMatch(/too large/);
  });
});
