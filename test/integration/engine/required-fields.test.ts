// A request body without a required field is 422 naming the field in plain words ("path: is
// required"), on every route, never valibot's own ("Invalid key: Expected \"path\" but received
// undefined"), which names no rule and reads as if the key were wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => s?.close());

describe('a body without a required field', () => {
  it.each([
    ['POST', '/api/run/playbook', {}, 'path'],
    ['POST', '/api/catalog/playbook', {}, 'content'],
    ['POST', '/api/credentials', { type: 'bearer', data: { token: 'x' } }, 'name'],
    ['POST', '/api/events/batch', {}, 'events'],
  ] as const)('%s %s is 4xx saying the field is required', async (method, route, body, field) => {
    const r = await http(s.url, method, route, body);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    const text = JSON.stringify(r.body);
    expect(text).not.toContain('Invalid key');
    expect(text).toContain(`${field}: is required`);
  });
});
