// A request with two Idempotency-Key headers was taken as one key: Node joins repeated headers
// with ", ", so keys `a` and `b` became the key `a, b` (printable ASCII), and the start ran under
// a key the client never sent (sent again with either key alone, it started another execution).
// Two keys are now refused, 422 naming the header, and nothing is started or accepted. Found by
// the OpenAPI-driven bad-input fuzzer (helper).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const content = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: k, path: t/k }\nworkflow:\n  - step: start\n    wait: { signal: go, timeout: 1h }\n';
  const res = await fetch(`${t.url}/api/catalog/playbook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content }) });
  expect(res.status).toBe(201);
});
afterAll(async () => t?.close());

/** POST `body` with the Idempotency-Key header sent once per key (node:http writes an array as separate header lines). */
function post(path: string, body: unknown, keys: string[]): Promise<{ status: number; body: { detail?: { errors?: string[] } } & Record<string, unknown> }> {
  const text = JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = http.request(new URL(path, t.url), { method: 'POST', headers: { ...asWorker, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } }, (res) => {
      let answer = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (answer += c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, body: JSON.parse(answer) }));
    });
    req.setHeader('idempotency-key', keys);
    req.on('error', fail);
    req.end(text);
  });
}

const counts = async () => (await t.deps.db.query<{ e: number; b: number; k: number }>('SELECT (SELECT count(*)::int FROM core.execution) AS e, (SELECT count(*)::int FROM core.batch_request) AS b, (SELECT count(*)::int FROM core.idempotency_key) AS k')).rows[0];

describe('two Idempotency-Key headers', () => {
  it('are refused, 422 naming the header, on a start, a signal and a batch: nothing is started, signalled or accepted', async () => {
    const first = await post('/api/run/playbook', { path: 't/k' }, ['one']);
    expect(first.status).toBe(200);
    const id = Number(first.body.execution_id);
    const before = await counts();
    const cases: [string, unknown][] = [
      ['/api/run/playbook', { path: 't/k' }],
      ['/api/execute', { path: 't/k' }],
      [`/api/executions/${id}/signals/go`, { payload: {} }],
      ['/api/events/batch', { execution_id: id, events: [{ event_type: 'command.heartbeat' }] }],
    ];
    for (const [path, body] of cases) {
      const res = await post(path, body, ['a', 'b']);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail?.errors).toEqual(['Idempotency-Key: sent 2 times: send one key']);
    }
    expect(await counts()).toEqual(before);
    const state = await fetch(`${t.url}/api/executions/${id}`).then((r) => r.json() as Promise<{ status: string }>);
    expect(state.status).toBe('running');
    // One key, as one header, still starts once and answers its retry with the same execution.
    const again = await post('/api/run/playbook', { path: 't/k' }, ['a, b']);
    expect(again.status).toBe(200);
    expect((await post('/api/run/playbook', { path: 't/k' }, ['a, b'])).body.execution_id).toBe(again.body.execution_id);
  });
});
