// GET /api/executions/{id}/state gives a waiting step its wake-up time from the wait's row. The
// row and the view must be of one moment: read apart, a step that began to wait between the two
// reads showed `wake_at: null` (a timer that never fires, to its reader). Here the read of the
// execution's row is held while a signal moves the execution from one wait to the next.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
});
afterAll(async () => {
  vi.restoreAllMocks();
  await s?.close();
});

const post = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);

describe('the state of an execution that has just begun to wait', () => {
  it("a waiting step's wake_at is never null for a timer, however the reads fall", async () => {
    const r = await post('/api/catalog/playbook', {
      content: `apiVersion: svc/v1
metadata: { name: state_wake_at, path: waits/state_wake_at }
workflow:
  - step: gate
    wait: { signal: go }
    next: hold
  - step: hold
    wait: { for: 1h }
`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const started = await post('/api/run/playbook', { path: 'waits/state_wake_at' });
    const id = started.body.execution_id as number;
    await until('gate waits', async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);

    // Hold the /state route's first read of the execution's row until the signal is in.
    let release = () => {};
    const held = new Promise<void>((res) => (release = res));
    let armed = true;
    const query = s.deps.db.query.bind(s.deps.db);
    vi.spyOn(s.deps.db, 'query').mockImplementation(async (...args: Parameters<typeof s.deps.db.query>) => {
      const text = typeof args[0] === 'string' ? args[0] : args[0].text;
      if (armed && /FROM core\.execution WHERE execution_id = \$1/.test(text)) {
        armed = false;
        await held;
      }
      return query(...args);
    });
    const state = get(`/api/executions/${id}/state`);
    await until('the state read waits', () => !armed, 5_000);
    // Whatever the route reads beside the row, it has read it by now.
    await new Promise((res) => setTimeout(res, 200));
    expect((await post(`/api/executions/${id}/signals/go`)).status).toBe(202);
    release();
    const body = (await state).body;
    vi.restoreAllMocks();
    expect(body.steps.hold).toMatchObject({ status: 'waiting', wait: { kind: 'timer', wake_at: expect.any(String) } });
  });
});
