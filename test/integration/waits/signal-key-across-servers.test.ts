// One signal sent again with its Idempotency-Key (DESIGN.md "Waiting and control": "a repeated
// signal with the same Idempotency-Key is answered as the first") to another server while the
// first is in flight, as a client whose answer was late does through a load balancer. Each server
// read no stored key; the first delivered and stored it; the second's routing found the wait over
// and answered 409 not_waiting: the signal had been delivered once, but the repeat said it had not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
let other: Awaited<ReturnType<typeof startSecondServer>>;
beforeAll(async () => {
  s = await startTestApp();
  other = await startSecondServer(s);
  const r = await http(s.url, 'POST', '/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: keyed_gate, path: keyed/gate }
workflow:
  - step: gate
    wait: { signal: go }
    next: after
  - step: after
    wait: { for: 1h }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
});
afterAll(async () => {
  await other?.close();
  await s?.close();
});

describe('the same Idempotency-Key to two servers at once', () => {
  it('is one signal, and every answer is the first (202, the same event), none 409', async () => {
    for (let round = 0; round < 8; round++) {
      const started = await http(s.url, 'POST', '/api/run/playbook', { path: 'keyed/gate' });
      const id = started.body.execution_id as number;
      await until(`execution ${id} waits`, async () => ((await http(s.url, 'GET', `/api/executions/${id}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);
      const headers = { 'idempotency-key': `round-${round}` };
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => http(i % 2 ? other.url : s.url, 'POST', `/api/executions/${id}/signals/go`, { payload: { approved: true } }, headers)),
      );
      expect(answers.map((r) => r.status), JSON.stringify(answers.map((r) => r.body))).toEqual([202, 202, 202, 202, 202, 202]);
      expect(new Set(answers.map((r) => r.body.event_id)).size).toBe(1);
      const events = (await http(s.url, 'GET', `/api/events/${id}?limit=1000`)).body.events as Json[];
      expect(events.filter((e) => e.event_type === 'signal.received')).toHaveLength(1);
    }
  });
});
