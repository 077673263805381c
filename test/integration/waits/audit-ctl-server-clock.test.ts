// A timer's `for` (and a signal's `timeout`) was counted from the server's own clock while the
// database's decides what is due: a server 60 s behind PostgreSQL's fired `for: 4s` at once, one
// 20 s ahead after 24 s. The wake-up is now counted on the database's clock, as the server last read it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { startSkewedServer } from '../../helpers/skewed-server.ts';
import { until } from '../../helpers/until.ts';

let ps: ServerProcesses;
const stops: (() => void)[] = [];
beforeAll(async () => {
  ps = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  for (const stop of stops) stop();
  await ps?.close();
});

describe('a timer on a server whose clock is off the database', () => {
  it.each([-60_000, 20_000])('waits its `for` by the database clock (server %i ms off)', async (skewMs) => {
    const { base, kill } = await startSkewedServer(ps, skewMs);
    stops.push(kill);
    const reg = await http(base, 'POST', '/api/catalog/playbook', {
      content: `
apiVersion: svc/v1
metadata: { name: skewed, path: audit/skewed }
workflow:
  - step: nap
    wait: { for: 4s }
`,
    });
    expect([200, 201]).toContain(reg.status);
    // Past the server's first look at core.wait, which reads the database's clock.
    await new Promise((r) => setTimeout(r, 1500));
    const started = await http(base, 'POST', '/api/run/playbook', { path: 'audit/skewed' });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const id = Number(started.body.execution_id);
    await until(`execution ${id} finished`, async () => (await http(base, 'GET', `/api/executions/${id}`)).body.status === 'completed', 40_000);
    const events = (await http(base, 'GET', `/api/events/${id}?limit=100`)).body.events as Json[];
    const set = events.find((e) => e.event_type === 'timer.set');
    const fired = events.filter((e) => e.event_type === 'timer.fired');
    expect(fired).toHaveLength(1);
    // Both times are the database's (each event's created_at): the wait lasted its 4 s, give or take a look.
    const waited = Date.parse(fired[0].created_at) - Date.parse(set.created_at);
    expect(waited).toBeGreaterThanOrEqual(3500);
    expect(waited).toBeLessThan(9000);
    expect(Math.abs(Date.parse(set.context.wake_at) - Date.parse(set.created_at) - 4000)).toBeLessThan(1000);
  }, 90_000);
});
