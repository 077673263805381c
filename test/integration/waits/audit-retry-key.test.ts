// A retry sent again with its Idempotency-Key (a client whose answer was lost, `svc retry` after a
// 503, a double click through a load balancer): the retry route read no key, so each repeat
// started another execution of the same work (docs/operations.md: a key "makes a repeat the same"
// request, as for starts and signals). Now the key is stored with the retry's execution by the
// statement that writes it: every repeat, on this server or another, at once or later, is answered
// with the first retry's 201, and one execution is started.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';

let s: TestApp;
let other: Awaited<ReturnType<typeof startSecondServer>>;
beforeAll(async () => {
  s = await startTestApp();
  other = await startSecondServer(s);
  const r = await http(s.url, 'POST', '/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: keyed_retry, path: keyed/retry }
workflow:
  - step: start
    wait: { until: "{{ workload.at }}" }
`,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
});
afterAll(async () => {
  await other?.close();
  await s?.close();
});

async function failedExecution(): Promise<number> {
  const started = await http(s.url, 'POST', '/api/run/playbook', { path: 'keyed/retry', payload: { at: 'not a time' } });
  const id = started.body.execution_id as number;
  expect(await executionApi(s.url).wait(id, 10_000)).toMatchObject({ status: 'failed' });
  return id;
}

const retriedAs = async (id: number): Promise<number[]> => (await http(s.url, 'GET', `/api/executions/${id}`)).body.retried_as as number[];

describe('POST /api/executions/{id}/retry with an Idempotency-Key', () => {
  it('sent again later, to another server, is answered as the first and starts nothing', async () => {
    const id = await failedExecution();
    const headers = { 'idempotency-key': 'retry-once' };
    const first = await http(s.url, 'POST', `/api/executions/${id}/retry`, {}, headers);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const again = await http(other.url, 'POST', `/api/executions/${id}/retry`, {}, headers);
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(`/api/executions/${first.body.execution_id}`);
    expect(await retriedAs(id)).toEqual([first.body.execution_id]);
    // Another body with the key is refused; without a key, a retry is another retry.
    const other422 = await http(s.url, 'POST', `/api/executions/${id}/retry`, { from_step: 'start' }, headers);
    expect(other422.status, JSON.stringify(other422.body)).toBe(422);
    expect((other422.body.detail as Json).code).toBe('idempotency_key_reused');
    const unkeyed = await http(s.url, 'POST', `/api/executions/${id}/retry`, {});
    expect(unkeyed.status).toBe(201);
    expect(await retriedAs(id)).toHaveLength(2);
  });

  it('sent six times at once to two servers is one retry, every answer the first', async () => {
    for (let round = 0; round < 4; round++) {
      const id = await failedExecution();
      const headers = { 'idempotency-key': `retry-round-${round}` };
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => http(i % 2 ? other.url : s.url, 'POST', `/api/executions/${id}/retry`, {}, headers)));
      expect(answers.map((r) => r.status), JSON.stringify(answers.map((r) => r.body))).toEqual([201, 201, 201, 201, 201, 201]);
      expect(new Set(answers.map((r) => r.body.execution_id)).size).toBe(1);
      expect(await retriedAs(id)).toEqual([answers[0].body.execution_id]);
    }
  });
});
