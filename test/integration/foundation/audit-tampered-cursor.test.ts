// A next_cursor of GET /api/executions is opaque base64url of the last row's start time and id; one
// tampered with to hold a time PostgreSQL cannot read (hour 99, year 0) reached the query and
// answered 500. It is refused as any cursor that is not ours: 422 naming the cursor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const cursorOf = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe('a tampered executions cursor', () => {
  it('is 422 naming the cursor, never a 500', async () => {
    for (const key of ['2024-01-01T99:00:00.000000Z', '2024-01-01T12:61:00.000000Z', '2024-01-01T12:00:75.000000Z', '0000-01-01T00:00:00.000000Z']) {
      const res = await http(t.url, 'GET', `/api/executions?cursor=${cursorOf(`${key} 5`)}`);
      expect(res.status, `${key}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail.errors).toEqual(['cursor: must be a next_cursor of this list (or an execution id)']);
    }
  });

  it('a cursor the list gave continues it', async () => {
    const playbook = 'apiVersion: svc/v1\nmetadata: { name: c, path: audit/cursor }\nworkflow:\n  - step: start\n';
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: playbook })).status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/cursor' })).status).toBe(200);
    const first = await http(t.url, 'GET', '/api/executions?limit=2');
    expect(first.body.executions).toHaveLength(2);
    const next = await http(t.url, 'GET', `/api/executions?limit=2&cursor=${first.body.next_cursor}`);
    expect(next.status).toBe(200);
    expect(next.body.executions).toHaveLength(1);
  });
});
