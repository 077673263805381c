// Labels given at start (issue 29 item 4): kept with the execution, answered by GET, and found by
// GET /api/executions?label=key:value (every label given must match); bad labels are a 422 that
// names the field and starts nothing; `svc run --label` and `svc list --label` send them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1\nmetadata: { name: done, path: labels/done }\nworkflow:\n  - step: start\n` });
  expect(r.status).toBe(201);
});
afterAll(async () => t?.close());

const start = async (labels?: Record<string, string>): Promise<number> => {
  const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'labels/done', ...(labels ? { labels } : {}) });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id as number;
};
const ids = async (query: string): Promise<number[]> => {
  const r = await http(t.url, 'GET', `/api/executions${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.executions as Json[]).map((e) => e.execution_id as number);
};

describe('labels', () => {
  it('are kept with the execution and find it; several must all match', async () => {
    const acmeGold = await start({ tenant: 'acme', tier: 'gold' });
    const acme = await start({ tenant: 'acme' });
    const other = await start({ tenant: 'globex' });
    const none = await start();
    expect((await http(t.url, 'GET', `/api/executions/${acmeGold}`)).body.labels).toEqual({ tenant: 'acme', tier: 'gold' });
    expect((await http(t.url, 'GET', `/api/executions/${none}`)).body.labels).toEqual({});
    expect(await ids('?label=tenant:acme')).toEqual([acme, acmeGold]);
    expect(await ids('?label=tenant:acme&label=tier:gold')).toEqual([acmeGold]);
    expect(await ids('?label=tenant:globex')).toEqual([other]);
    expect(await ids('?label=tenant:nobody')).toEqual([]);
    const counted = (await http(t.url, 'GET', '/api/executions?label=tenant:acme')).body.counts;
    expect(counted.completed).toBe(2);
  });

  it('refuses bad labels with a 422 naming the field, and starts nothing', async () => {
    const before = (await http(t.url, 'GET', '/api/executions?path=labels/done')).body.count as number;
    for (const labels of [{ 'bad key': 'x' }, { k: 'x'.repeat(201) }, Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])), { k: 5 }]) {
      const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'labels/done', labels });
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(JSON.stringify(r.body.detail)).toContain('labels');
    }
    expect((await http(t.url, 'GET', '/api/executions?path=labels/done')).body.count).toBe(before);
    expect((await http(t.url, 'GET', '/api/executions?label=nocolon')).status).toBe(422);
  });
});
