// Pause, resume and signals on two servers over one database (DESIGN.md "Waiting and control",
// "Scale-out"): each server routes from its memory of the executions it handled last, and a
// pause, resume or signal that no longer applies writes nothing, so no write guard told a server
// its memory was stale. An execution paused on one server and resumed on another could not be
// paused again on the first (409 "is paused" while it ran); one started on one server and paused
// on another could not be resumed on the first; a signal for the step now waiting was 409 on the
// server that had seen the step before it wait; a timer the other server set (and then went
// away) never fired on the first, whose timekeeper found it moot in its older memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
let other: Awaited<ReturnType<typeof startSecondServer>>;
beforeAll(async () => {
  s = await startTestApp();
  other = await startSecondServer(s);
});
afterAll(async () => {
  await other?.close();
  await s?.close();
});

const first = (path: string, body: unknown = {}) => http(s.url, 'POST', path, body);
const second = (path: string, body: unknown = {}) => http(other.url, 'POST', path, body);
const get = (path: string) => http(s.url, 'GET', path);

async function started(path: string): Promise<number> {
  const r = await first('/api/run/playbook', { path });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const id = r.body.execution_id as number;
  await until(`execution ${id} waits`, async () => ((await get(`/api/executions/${id}`)).body.waits as Json[] | undefined)?.length, 10_000);
  return id;
}
const expectStatus = async (r: Promise<{ status: number; body: Json }>, status: number) => {
  const got = await r;
  expect(got.status, JSON.stringify(got.body)).toBe(status);
  return got.body;
};

beforeAll(async () => {
  const r = await first('/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: two_gates, path: across/two_gates }
workflow:
  - step: one
    wait: { signal: go }
    next: two
  - step: two
    wait: { signal: go }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const timed = await first('/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: gate_then_timer, path: across/gate_then_timer }
workflow:
  - step: one
    wait: { signal: go }
    next: two
  - step: two
    wait: { for: 1s }
`,
  });
  expect(timed.status, JSON.stringify(timed.body)).toBe(201);
});

describe('control of one execution through two servers', () => {
  it('paused on the first, resumed on the second: the first pauses it again, and resumes it', async () => {
    const id = await started('across/two_gates');
    await expectStatus(first(`/api/executions/${id}/pause`), 200);
    await expectStatus(second(`/api/executions/${id}/resume`), 200);
    expect(await expectStatus(first(`/api/executions/${id}/pause`), 200)).toMatchObject({ status: 'paused' });
    expect((await get(`/api/executions/${id}`)).body).toMatchObject({ status: 'paused' });
    await expectStatus(second(`/api/executions/${id}/resume`), 200);
    await expectStatus(second(`/api/executions/${id}/pause`), 200);
    expect(await expectStatus(first(`/api/executions/${id}/resume`), 200)).toMatchObject({ status: 'running' });
  });

  it('a signal the second server delivered moves the execution on: the first delivers the next to the step now waiting', async () => {
    const id = await started('across/two_gates');
    expect(await expectStatus(second(`/api/executions/${id}/signals/go`, { payload: 1 }), 202)).toMatchObject({ step: 'one' });
    expect(await expectStatus(first(`/api/executions/${id}/signals/go`, { payload: 2 }), 202)).toMatchObject({ step: 'two' });
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return body.status === 'completed' && body;
    }, 10_000);
    expect(done).toMatchObject({ status: 'completed' });
  });
});

describe('a wait another server began', () => {
  it('fires on this server (the other runs no timekeeper), once', async () => {
    const id = await started('across/gate_then_timer');
    // The second server delivers the signal: step two's timer is set there.
    expect(await expectStatus(second(`/api/executions/${id}/signals/go`), 202)).toMatchObject({ step: 'one' });
    const done = await until(`execution ${id} finished`, async () => {
      const body = (await get(`/api/executions/${id}`)).body;
      return body.status === 'completed' && body;
    }, 10_000);
    expect(done).toMatchObject({ status: 'completed', waits: [] });
    const log = ((await get(`/api/events/${id}?limit=1000`)).body.events as Json[]).map((e) => e.event_type);
    expect(log.filter((t) => t === 'timer.fired')).toHaveLength(1);
  });
});
