// A field of the wrong type was told in the validation library's words: `cascade: Invalid type:
// Expected boolean but received "yes"`, `path: Invalid type: Expected string but received 5`. It
// is now told as every other problem of the API is: `cascade: must be boolean, got "yes"`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('a field of the wrong type', () => {
  it.each([
    ['POST', '/api/executions/1/cancel', { cascade: 'yes' }, 'cascade: must be boolean, got "yes"'],
    ['POST', '/api/run/playbook', { path: 5 }, 'path: must be string, got 5'],
    ['POST', '/api/executions/1/pause', { reason: 7 }, 'reason: must be string, got 7'],
  ])('%s %s is told what it must be and what came', async (method, path, body, error) => {
    const res = await http(t.url, method, path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail.errors).toContain(error);
    expect(JSON.stringify(res.body)).not.toContain('Invalid type');
  });
});
