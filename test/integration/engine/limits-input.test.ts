// What PUT, GET and DELETE /api/limits answer to input they cannot take, on a real server and
// database: a 4xx whose detail names the field and says why, never a 500, and nothing changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe("a playbook's inline limit (@<path>)", () => {
  it('is refused by PUT and DELETE with 409 inline_limit saying its playbook holds it; it still shows, unchanged', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: q, path: flow/inline }
concurrency: { limit: 3 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
` })).status).toBe(201);
    for (const [method, body, verb] of [['PUT', { concurrency: 5 }, 'set'], ['DELETE', undefined, 'deleted']] as const) {
      const r = await http(t.url, method, '/api/limits/@flow%2Finline', body);
      expect(r.status, method).toBe(409);
      expect(r.body.detail, method).toEqual({
        code: 'inline_limit',
        message: `limit @flow/inline is the inline limit of playbook flow/inline (its concurrency: {limit: N}): its playbook holds it, so it is not ${verb} here; change the playbook's concurrency, or PUT a named limit and name it there`,
        errors: ['name: @flow/inline is held by playbook flow/inline'],
      });
    }
    // A playbook that is not there: refused alike (no PUT makes an @ name).
    expect((await http(t.url, 'PUT', '/api/limits/@nothing%2Fhere', { concurrency: 1 })).body.detail.code).toBe('inline_limit');
    expect((await http(t.url, 'GET', '/api/limits/@flow%2Finline')).body).toMatchObject({ name: '@flow/inline', defined: false, concurrency: 3 });
    expect((await http(t.url, 'GET', '/api/limits')).body.limits).toEqual([expect.objectContaining({ name: '@flow/inline', defined: false, concurrency: 3 })]);
  });
});

describe('PUT /api/limits/{name} with a body it cannot take', () => {
  it('is 422 with each error naming its field in words, not valibot\'s; the limit is not made', async () => {
    const put = async (body: string | undefined) =>
      fetch(`${t.url}/api/limits/tenant`, { method: 'PUT', ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body }) });
    for (const [body, errors] of [
      ['null', ['body: must be a JSON object']],
      ['"two"', ['body: must be a JSON object']],
      [undefined, ['body: must be a JSON object']],
      ['{"rate": null}', ['rate: must be a JSON object']],
      ['{"rate": {}}', ['rate.limit: is required', 'rate.period_seconds: is required']],
      ['{"rate": {"limit": 5}}', ['rate.period_seconds: is required']],
    ] as const) {
      const r = await put(body);
      expect(r.status, body).toBe(422);
      expect(((await r.json()) as { detail: { errors: string[] } }).detail.errors, body).toEqual(errors);
    }
    expect((await http(t.url, 'GET', '/api/limits/tenant')).status).toBe(404);
  });
});
