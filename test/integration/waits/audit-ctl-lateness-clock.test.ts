// svc_wait_fire_lateness_seconds (from a wait's wake-up to its firing's commit) subtracted the
// wake-up, a time on PostgreSQL's clock, from the server's own: a server 20 s ahead of the
// database reported a timer fired on time as 20 s late. It is measured on the database's clock now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { startSkewedServer } from '../../helpers/skewed-server.ts';
import { until } from '../../helpers/until.ts';

const AHEAD_MS = 20_000;

let ps: ServerProcesses;
let stop = () => {};
beforeAll(async () => {
  ps = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  stop();
  await ps?.close();
});

describe('the lateness of a fired wait on a server whose clock is ahead of the database', () => {
  it('is counted on the database clock', async () => {
    const server = await startSkewedServer(ps, AHEAD_MS);
    stop = server.kill;
    const base = server.base;
    const reg = await http(base, 'POST', '/api/catalog/playbook', { content: `
apiVersion: svc/v1
metadata: { name: late, path: audit/late }
workflow:
  - step: nap
    wait: { until: "{{ workload.at }}" }
` });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    // Due in 2 s by the database's clock (the test's, on the same host): an absolute time, which the server does not count.
    const at = new Date(Date.now() + 2000).toISOString();
    const started = await http(base, 'POST', '/api/run/playbook', { path: 'audit/late', payload: { at } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const id = Number(started.body.execution_id);
    await until(`execution ${id} finished`, async () => (await http(base, 'GET', `/api/executions/${id}`)).body.status === 'completed', 20_000);
    const metrics = String((await http(base, 'GET', '/metrics')).body);
    const sum = Number(/^svc_wait_fire_lateness_seconds_sum(?:\{[^}]*\})? (\S+)$/m.exec(metrics)?.[1]);
    const count = Number(/^svc_wait_fire_lateness_seconds_count(?:\{[^}]*\})? (\S+)$/m.exec(metrics)?.[1]);
    expect(count).toBe(1);
    // Fired within a look or two of its time, not AHEAD_MS late.
    expect(sum).toBeLessThan(5);
  }, 60_000);
});
