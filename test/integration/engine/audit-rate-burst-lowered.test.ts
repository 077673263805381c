// A rate limit replaced by a smaller burst applies at once (docs/flow-control.md, "Limits": "A
// change applies at once"): a key's bucket never holds more than the limit's burst as it is now,
// whatever tokens the key kept from the burst it had before (real server and database, no worker).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const claim = async (max: number): Promise<number[]> =>
  (await http(t.url, 'POST', '/api/worker/claim', { worker_id: 'w-burst', max, wait_ms: 0 }, asWorker)).body.commands.map((c: { execution_id: number }) => c.execution_id);

describe('a rate whose burst is lowered', () => {
  it('hands out no more than the new burst: the tokens a key kept from the old one are not spent', async () => {
    expect((await http(t.url, 'PUT', '/api/limits/partner', { rate: { limit: 100, period_seconds: 1, burst: 100 } })).status).toBe(200);
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1
metadata: { name: burst, path: flow/burst-lowered }
workflow:
  - step: start
    tool: { name: t, kind: noop, limit: { name: partner, key: acme } }
` })).status).toBe(201);
    const run = async () => (await http(t.url, 'POST', '/api/run/playbook', { path: 'flow/burst-lowered' })).body.execution_id as number;
    // One call under the old limit: the key keeps 99 of its 100 tokens, and one slot is held.
    const first = await run();
    expect(await claim(1)).toEqual([first]);

    // The partner now allows one call a minute, and no burst.
    expect((await http(t.url, 'PUT', '/api/limits/partner', { rate: { limit: 1, period_seconds: 60, burst: 1 } })).status).toBe(200);
    const shown = (await http(t.url, 'GET', '/api/limits/partner')).body;
    expect(shown.key_list[0].tokens, 'the bucket as shown').toBeLessThanOrEqual(1);
    const later = [await run(), await run(), await run(), await run(), await run()];
    const claimed = await claim(5);
    expect(claimed.length, `claimed ${claimed.length} of 5 under a burst of 1`).toBeLessThanOrEqual(1);
    for (const id of [first, ...later]) expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' })).status).toBe(200);
  });
});
