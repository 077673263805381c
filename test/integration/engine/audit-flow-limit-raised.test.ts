// Raising a limit while executions are queued on it woke the task claimers but not the admitter:
// the queued executions were admitted at its next look, up to a second later (~1.1 s measured).
// The PUT now wakes its server's admitter, as a freed slot does.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** How long after the limit's update (its `updated_at`) the queued execution was admitted (context.at): both PostgreSQL's clock. */
async function admittedAfterRaise(round: number): Promise<number> {
  const name = `raised${round}`;
  expect((await http(t.url, 'PUT', `/api/limits/${name}`, { concurrency: 1 })).status).toBe(200);
  const path = `audit/raised-${round}`;
  const reg = await http(t.url, 'POST', '/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: raised_${round}, path: ${path} }
concurrency: { limit: ${name}, key: "k" }
workflow:
  - step: hold
    wait: { signal: go }
`,
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  const first = (await http(t.url, 'POST', '/api/run/playbook', { path })).body.execution_id;
  await until('the first admitted', async () => (await http(t.url, 'GET', `/api/executions/${first}`)).body.status === 'running', 20_000, 50);
  const second = (await http(t.url, 'POST', '/api/run/playbook', { path })).body.execution_id;
  expect((await http(t.url, 'GET', `/api/executions/${second}`)).body.status).toBe('queued');
  // Off the admitter's own rhythm: somewhere in its second.
  await new Promise((r) => setTimeout(r, 200 + round * 170));
  const raised = await http(t.url, 'PUT', `/api/limits/${name}`, { concurrency: 2 });
  expect(raised.status).toBe(200);
  const admitted = await until('the second admitted', async () => {
    const events = (await http(t.url, 'GET', `/api/events/${second}?limit=50`)).body.events as Json[];
    return events.find((e) => e.event_type === 'execution.admitted');
  }, 20_000, 20);
  return Date.parse(admitted.context.at) - Date.parse(raised.body.updated_at);
}

it('raising a limit admits what is queued on it at once, not at the admitter next look', async () => {
  const delays: number[] = [];
  for (let round = 0; round < 4; round++) delays.push(await admittedAfterRaise(round));
  // Before: each waited for the next look, uniformly up to a second; now a look follows the PUT.
  for (const ms of delays) expect(ms, `admitted after ${delays.join(', ')} ms`).toBeLessThan(400);
}, 120_000);
