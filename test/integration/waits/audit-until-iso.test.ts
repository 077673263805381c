// A timer's `until` (docs/playbook-dsl.md "Waiting"): "ISO 8601 with an offset or epoch
// milliseconds ...; one that is not fails the step (wait_until)". Any text ending in an offset was
// handed to Date.parse, which reads many other ways of writing a time, some wrongly for their
// writer: `01.02.2026 10:00 +01:00` (1 February) waited until 2 January, `12 Z` until 2001-12-01;
// the step then fired at once (or at a day nobody asked for) instead of failing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);

const finished = (id: number): Promise<Json> => executionApi(s.url).wait(id, 10_000);
async function run(at: string): Promise<number> {
  const r = await post('/api/run/playbook', { path: 'until_iso/at', payload: { at } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.execution_id as number;
}

describe('wait until a time written otherwise than ISO 8601', () => {
  it('fails the step with wait_until; ISO 8601 with a space, no seconds or an offset without a colon waits', async () => {
    const reg = await post('/api/catalog/playbook', { content: `
apiVersion: svc/v1
metadata: { name: at, path: until_iso/at }
workflow:
  - step: start
    wait: { until: "{{ workload.at }}" }
` });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    for (const at of ['01.02.2026 10:00 +01:00', '12 Z', 'Dec 1, 2026 06:00 -0500']) {
      expect(await finished(await run(at)), at).toMatchObject({ status: 'failed', error: { code: 'wait_until', step: 'start' } });
    }
    for (const at of ['2000-01-02 03:04+02:00', '2000-01-02T03:04:05.5-0130']) {
      expect(await finished(await run(at)), at).toMatchObject({ status: 'completed' });
    }
    // Far ahead: it waits, for the time written.
    const later = await run('2099-02-01 10:00+01:00');
    const wait = await until(`execution ${later} waits`, async () => ((await get(`/api/executions/${later}`)).body.waits as Json[] | undefined)?.[0], 10_000);
    expect(wait).toMatchObject({ step: 'start', kind: 'timer', wake_at: '2099-02-01T09:00:00.000Z' });
    expect((await post(`/api/executions/${later}/cancel`)).body).toMatchObject({ status: 'cancelled' });
  });
});
