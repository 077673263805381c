// A POST sent without a body was told `body: Invalid type: Expected Object but received
// undefined` (valibot's words: no fix named), one with a JSON string `Expected Object but received
// "abc"`. The part is now named with what to send, or what came instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('a body that is not a JSON object', () => {
  it('missing: says a JSON object is required, and how to send it', async () => {
    for (const path of ['/api/run/playbook', '/api/execute']) {
      const res = await http(t.url, 'POST', path);
      expect(res.status, path).toBe(422);
      expect(res.body.detail.errors, path).toEqual(['body: is required: send a JSON object (Content-Type: application/json)']);
    }
  });

  it('another JSON value: says what came instead', async () => {
    const cases: [string, string][] = [
      ['"abc"', 'body: must be a JSON object, got string'],
      ['42', 'body: must be a JSON object, got number'],
      ['true', 'body: must be a JSON object, got boolean'],
    ];
    for (const [body, error] of cases) {
      const res = await http(t.url, 'POST', '/api/run/playbook', body);
      expect(res.status, body).toBe(422);
      expect(res.body.detail.errors, body).toEqual([error]);
    }
  });
});
