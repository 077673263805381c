// GET /api/limits/{name}?keys=N (and `svc limits show NAME --keys N`) lists "the busiest keys
// first". It ordered them by slots held alone, then by name: keys that held nothing but had
// executions queued (a limit not defined yet, a rate out of tokens) sorted among idle keys, which
// stay for a day, so past the first N keys the ones whose work waited were cut from the page.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const PLAYBOOK = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: busiest, path: audit/busiest }
workload: { k: a }
concurrency: { limit: busiest-undefined, key: "{{ workload.k }}" }
workflow:
  - step: start
    tool: { name: x, kind: noop }
`;

const start = async (k: string): Promise<number> => {
  const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/busiest', payload: { k } });
  expect(r.status).toBe(200);
  return r.body.execution_id;
};

it('a key with executions queued is listed before idle keys, whatever their names', async () => {
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK })).status).toBe(201);
  // The limit is not defined: every start is queued, no key holds a slot. Key "a" is left idle
  // (its one execution cancelled); key "b" has two executions queued.
  const a = await start('a');
  expect((await http(t.url, 'POST', `/api/executions/${a}/cancel`, { reason: 'test' })).status).toBe(200);
  await start('b');
  await start('b');

  const all = await http(t.url, 'GET', '/api/limits/busiest-undefined');
  expect(all.status).toBe(200);
  expect(all.body.key_list.map((k: { key: string; queued: number }) => [k.key, k.queued])).toEqual([
    ['b', 2],
    ['a', 0],
  ]);
  const first = await http(t.url, 'GET', '/api/limits/busiest-undefined?keys=1');
  expect(first.body).toMatchObject({ keys: 2, queued: 2 });
  expect(first.body.key_list).toMatchObject([{ key: 'b', running: 0, queued: 2, waiting: 0 }]);
});
