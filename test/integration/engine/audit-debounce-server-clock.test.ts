// A debounce window's end (`not_before`) was counted from the server's own clock while the
// database's now() admits the run and extends the window: on a server 60 s behind PostgreSQL's,
// `debounce: {seconds: 4}` admitted at once. It is now counted on the database's clock, as waits are.
import { afterAll, beforeAll, expect, it } from 'vitest';
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

it('a debounced start on a server 60 s behind the database waits its window by the database clock', async () => {
  const { base, kill } = await startSkewedServer(ps, -60_000);
  stops.push(kill);
  const reg = await http(base, 'POST', '/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: skewed_debounce, path: audit/skewed-debounce }
debounce: { key: "one", seconds: 4 }
workflow:
  - step: nap
    wait: { for: 1s }
`,
  });
  expect([200, 201], JSON.stringify(reg.body)).toContain(reg.status);
  // Past the server's first look at core.wait, which reads the database's clock.
  await new Promise((r) => setTimeout(r, 1500));
  const started = await http(base, 'POST', '/api/run/playbook', { path: 'audit/skewed-debounce' });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const id = Number(started.body.execution_id);
  await until(`execution ${id} finished`, async () => (await http(base, 'GET', `/api/executions/${id}`)).body.status === 'completed', 40_000);
  const events = (await http(base, 'GET', `/api/events/${id}?limit=100`)).body.events as Json[];
  const queued = events.find((e) => e.event_type === 'execution.queued');
  const admitted = events.find((e) => e.event_type === 'execution.admitted');
  // Both times are the database's (each event's created_at): the window lasted its 4 s, give or take a look.
  expect(Math.abs(Date.parse(queued.context.debounce_until) - Date.parse(queued.created_at) - 4000)).toBeLessThan(1000);
  const waited = Date.parse(admitted.created_at) - Date.parse(queued.created_at);
  expect(waited).toBeGreaterThanOrEqual(3500);
  expect(waited).toBeLessThan(9000);
}, 90_000);
