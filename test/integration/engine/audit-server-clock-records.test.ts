// What a server records of a moment was on its own clock where the rest is PostgreSQL's: on a
// server 60 s ahead, a cancel's `cancelled_at` came 60 s after the event that carries it, and a
// webhook fire's `trigger.fired_at` 60 s after the execution it started; until the timekeeper's
// first look (about a second after the start) its reports too. A server reads the database's clock
// at its start, and records every moment by it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { startSkewedServer } from '../../helpers/skewed-server.ts';

const AHEAD_MS = 60_000;
const SECRET = 'bearer-clock-secret-5d1e9a7c3b2f4068';
const PATH = 'audit/clock-records';

let ps: ServerProcesses;
const stops: (() => void)[] = [];
beforeAll(async () => {
  ps = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  for (const stop of stops) stop();
  await ps?.close();
});

it("records a webhook fire's fired_at and a cancel's cancelled_at on the database's clock, from the start", async () => {
  const { base, kill } = await startSkewedServer(ps, AHEAD_MS);
  stops.push(kill);
  // At once after the start: no wait for the timekeeper's first look.
  expect((await http(base, 'POST', '/api/credentials', { name: 'clock_hook', type: 'custom', data: { secret: SECRET } })).status).toBe(201);
  const reg = await http(base, 'POST', '/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: clock_records, path: ${PATH} }
triggers:
  - { name: hook, kind: webhook, auth: clock_hook, signature: bearer, payload: { fired: "{{ trigger.fired_at }}" } }
workflow:
  - step: nap
    wait: { for: 120s }
`,
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  const fired = await http(base, 'POST', `/api/hooks/${PATH}/hook`, { note: 'tick' }, { authorization: `Bearer ${SECRET}` });
  expect(fired.status, JSON.stringify(fired.body)).toBe(202);
  const id = Number(fired.body.execution_id);
  const started = await ps.db.query<{ fired: string; at: Date }>(`SELECT context->'input'->'workload'->>'fired' AS fired, created_at AS at FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`, [id]);
  const firedSkew = Date.parse(started.rows[0].fired) - started.rows[0].at.getTime();
  expect(Math.abs(firedSkew), `fired_at ${Math.round(firedSkew)} ms off its execution's start`).toBeLessThan(5_000);

  const cancel = await http(base, 'POST', `/api/executions/${id}/cancel`, { reason: 'clock check' });
  expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
  const events = (await http(base, 'GET', `/api/events/${id}?limit=100`)).body.events as Json[];
  const cancelled = events.find((e) => e.event_type === 'execution.cancelled');
  const cancelSkew = Date.parse(cancelled.context.cancelled_at) - Date.parse(cancelled.created_at);
  expect(Math.abs(cancelSkew), `cancelled_at ${Math.round(cancelSkew)} ms off its event's`).toBeLessThan(5_000);
}, 90_000);
