// A paused execution's due waits wait for the resume (DESIGN.md "Waiting and control"), also
// when the timekeeper read them as due before the pause committed: it routes `timer.fired` (or
// `wait.timed_out`) for a wait it saw under a running execution, and that event then meets the
// paused one. On a real server, 150 `until` timers paused as they came due fired 138 times
// after their `execution.paused`; here the timekeeper's late event is routed as it would be.
// Such a wake-up writes nothing, so no write guard corrects a server that remembers the
// execution as paused after another server resumed it: its timekeeper reads it afresh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeEvents } from '../../../actors/route-events.ts';
import { EVENT } from '../../../machines/event-types.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
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
const types = async (id: number): Promise<string[]> => ((await get(`/api/events/${id}?limit=1000`)).body.events as Json[]).map((e) => String(e.event_type));

async function register(yaml: string): Promise<void> {
  const r = await post('/api/catalog/playbook', { content: yaml });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

/** Starts `path`, waits until its one wait is listed, pauses it, and returns the wait as listed. */
async function pausedWhileWaiting(path: string): Promise<{ id: number; wait: Json }> {
  const started = await post('/api/run/playbook', { path });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const id = started.body.execution_id as number;
  const wait = await until(`execution ${id} waits`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.[0], 10_000);
  const paused = await post(`/api/executions/${id}/pause`);
  expect(paused.status, JSON.stringify(paused.body)).toBe(200);
  return { id, wait };
}

describe("a due wait the timekeeper routes after the pause", () => {
  it.each([
    ['timer.fired', 'timer', `wait: { for: 1s }`],
    ['wait.timed_out', 'signal', `wait: { signal: go, timeout: 1s }\n    next: [ { step: after, when: "{{ outcome.status == 'timeout' }}" } ]`],
  ] as const)('%s is moot while paused: nothing appended, the wait stays; after the resume it fires once', async (eventType, kind, wait) => {
    const path = `paused_due/${kind}`;
    await register(`
apiVersion: svc/v1
metadata: { name: paused_due_${kind}, path: ${path} }
workflow:
  - step: hold
    ${wait}
  - step: after
`);
    const { id, wait: listed } = await pausedWhileWaiting(path);
    await new Promise((r) => setTimeout(r, 1200));
    // What the timekeeper routes for a wait it read as due while the execution still ran.
    const { results } = await routeEvents(s.deps, [{
      execution_id: id,
      event_type: eventType === 'timer.fired' ? EVENT.timerFired : EVENT.waitTimedOut,
      step: 'hold',
      context: { seq: listed.seq, wake_at: listed.wake_at },
    }]);
    expect(results[0]).toMatchObject({ event_id: null, error: 'not_waiting' });
    expect(await types(id)).not.toContain(eventType);
    const row = (await get(`/api/executions/${id}`)).body;
    expect(row).toMatchObject({ status: 'paused', waits: [expect.objectContaining({ step: 'hold', kind })] });

    expect((await post(`/api/executions/${id}/resume`)).status).toBe(200);
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return body.status !== 'running' && body;
    }, 10_000);
    expect(done).toMatchObject({ status: 'completed', waits: [] });
    const log = await types(id);
    expect(log.filter((t) => t === eventType)).toHaveLength(1);
    expect(log.indexOf(eventType)).toBeGreaterThan(log.indexOf('execution.resumed'));
  });
});

describe('paused on one server, resumed on another', () => {
  it("the first server's timekeeper fires the due timer once, though it remembers the execution paused", async () => {
    await register(`
apiVersion: svc/v1
metadata: { name: paused_elsewhere, path: paused_due/elsewhere }
workflow:
  - step: hold
    wait: { for: 1s }
`);
    const { id } = await pausedWhileWaiting('paused_due/elsewhere');
    // The second server runs no timekeeper: the due timer is the first server's to fire.
    const second = await startSecondServer(s);
    try {
      const resumed = await http(second.url, 'POST', `/api/executions/${id}/resume`, {});
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    } finally {
      await second.close();
    }
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return body.status !== 'running' && body;
    }, 10_000);
    expect(done).toMatchObject({ status: 'completed', waits: [] });
    expect((await types(id)).filter((t) => t === 'timer.fired')).toHaveLength(1);
  });
});
