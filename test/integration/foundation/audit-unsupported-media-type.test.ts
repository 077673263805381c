// A body sent as anything but application/json was answered 415 with {"detail": "Unsupported
// Media Type"}: fastify's own text, no code from the registry (machines/error-codes.ts had none
// for 415) and no word of what the API takes. It is now {code: 'unsupported_media_type',
// message} naming application/json and the type sent, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODES } from '../../../machines/error-codes.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';

let t: TestApp;

const TABLES = ['catalog', 'credential', 'execution', 'event', 'runtime', 'flow_limit', 'keychain'];
async function rowCounts(): Promise<number[]> {
  const out: number[] = [];
  for (const table of TABLES) out.push((await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.${table}`)).rows[0].n);
  return out;
}

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('a body that is not sent as JSON', () => {
  const cases: { method: string; path: string; type: string; body: string }[] = [
    { method: 'POST', path: '/api/run/playbook', type: 'text/plain', body: '{"path":"x/y"}' },
    { method: 'POST', path: '/api/credentials', type: 'application/x-www-form-urlencoded', body: 'name=c&type=bearer' },
    { method: 'POST', path: '/api/catalog/playbook', type: 'application/yaml', body: 'apiVersion: svc/v1' },
    { method: 'PUT', path: '/api/limits/l1', type: 'application/xml', body: '<concurrency>2</concurrency>' },
    { method: 'POST', path: '/api/worker/pool/register', type: 'multipart/form-data; boundary=x', body: '--x--' },
    { method: 'POST', path: '/api/keychain/1/k1', type: 'text/plain; charset=utf-8', body: '{"token_data":{}}' },
  ];

  it.each(cases)('$method $path as $type: 415 unsupported_media_type naming the type, nothing stored', async (c) => {
    const before = await rowCounts();
    const res = await fetch(t.url + c.path, { method: c.method, headers: { ...asWorker, 'content-type': c.type }, body: c.body });
    expect(res.status).toBe(415);
    const body = (await res.json()) as { detail: { code: string; message: string } };
    expect(body.detail).toEqual({ code: 'unsupported_media_type', message: `the body must be JSON, sent with content-type: application/json; got '${c.type}'` });
    expect(Object.entries(CODES).find(([code]) => code === body.detail.code)?.[1]).toMatchObject({ status: 415 });
    expect(await rowCounts()).toEqual(before);
  });
});
