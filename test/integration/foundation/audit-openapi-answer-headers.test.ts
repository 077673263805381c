// What the OpenAPI document says of an answer's headers and body is what the server sends: a
// client written from the document alone (a generated one) reads an answer's media type and
// headers from it. Found by the contract audit (a script checking every route's real answers
// against GET /docs/json): the batch stream's 204 was documented with an application/json body,
// and the Idempotent-Replayed and Retry-After headers the routes send were in no operation.
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const Answer = v.looseObject({ content: v.optional(v.record(v.string(), v.unknown())), headers: v.optional(v.record(v.string(), v.unknown())) });
const OpenApi = v.object({ paths: v.record(v.string(), v.record(v.string(), v.looseObject({ responses: v.record(v.string(), Answer) }))) });
const doc = () => v.parse(OpenApi, t.app.swagger());
const answerOf = (path: string, method: string, status: string) => doc().paths[path][method].responses[status];

const playbook = (path: string, rest: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: n, path: ${path} }\n${rest}`;

it('documents no body for a 204, and the batch stream answers a reconnection after the end with none', async () => {
  const no = Object.entries(doc().paths).flatMap(([path, ops]) =>
    Object.entries(ops).flatMap(([method, op]) => (op.responses['204']?.content ? [`${method.toUpperCase()} ${path}`] : [])),
  );
  expect(no).toEqual([]);
  expect(answerOf('/api/events/batch/{request_id}/stream', 'get', '204')).toBeDefined();

  await t.app.inject({ method: 'POST', url: '/api/catalog/playbook', payload: { content: playbook('headers/one', 'workflow:\n  - step: start\n    wait: { signal: go }\n') } });
  const started = (await t.app.inject({ method: 'POST', url: '/api/run/playbook', payload: { path: 'headers/one' } })).json();
  const batch = await t.app.inject({ method: 'POST', url: '/api/events/batch', headers: asWorker, payload: { execution_id: started.execution_id, events: [{ event_type: 'command.heartbeat', command_id: 987654, attempt: 1 }] } });
  expect(batch.statusCode, batch.body).toBe(202);
  const status = String(batch.headers.location);
  let last = '';
  for (let i = 0; i < 100 && !['completed', 'failed'].includes(last); i++) {
    last = (await t.app.inject({ method: 'GET', url: status, headers: asWorker })).json().state;
    if (!['completed', 'failed'].includes(last)) await new Promise((r) => setTimeout(r, 100));
  }
  const place = last === 'completed' ? '3' : '4';
  const again = await t.app.inject({ method: 'GET', url: status.replace(/\/status$/, '/stream'), headers: { ...asWorker, 'last-event-id': place } });
  expect(again.statusCode).toBe(204);
  expect(again.body).toBe('');
});

it('documents Idempotent-Replayed on the keyed routes that send it, and Retry-After on every 5XX', async () => {
  await t.app.inject({ method: 'POST', url: '/api/catalog/playbook', payload: { content: playbook('headers/two', 'workflow:\n  - step: start\n    wait: { signal: go }\n') } });
  const keyed = (key: string) => ({ 'content-type': 'application/json', 'idempotency-key': key });
  // Each keyed route, sent twice with one key: the repeat says it is one.
  const run = { path: 'headers/two' };
  const first = (await t.app.inject({ method: 'POST', url: '/api/run/playbook', headers: keyed('r1'), payload: run })).json();
  const sends: { path: string; method: string; status: number; url: string; payload: object; headers?: Record<string, string> }[] = [
    { path: '/api/run/playbook', method: 'post', status: 200, url: '/api/run/playbook', payload: run },
    { path: '/api/execute', method: 'post', status: 200, url: '/api/execute', payload: run },
    { path: '/api/executions/{id}/signals/{name}', method: 'post', status: 202, url: `/api/executions/${first.execution_id}/signals/go`, payload: { payload: { ok: true } } },
    { path: '/api/events/batch', method: 'post', status: 202, url: '/api/events/batch', payload: { execution_id: first.execution_id, events: [{ event_type: 'command.heartbeat', command_id: 987654, attempt: 1 }] }, headers: asWorker },
  ];
  for (const [i, s] of sends.entries()) {
    const headers = { ...keyed(`k${i}`), ...s.headers };
    const once = await t.app.inject({ method: 'POST', url: s.url, headers, payload: s.payload });
    expect(once.statusCode, `${s.url}: ${once.body}`).toBe(s.status);
    expect(once.headers['idempotent-replayed'], s.url).toBeUndefined();
    const twice = await t.app.inject({ method: 'POST', url: s.url, headers, payload: s.payload });
    expect(twice.statusCode, `${s.url}: ${twice.body}`).toBe(s.status);
    expect(twice.headers['idempotent-replayed'], s.url).toBe('true');
    expect(Object.keys(answerOf(s.path, s.method, String(s.status)).headers ?? {}), `${s.method} ${s.path}`).toContain('idempotent-replayed');
  }
  // A retry's 201 (its Location beside it).
  expect(Object.keys(answerOf('/api/executions/{id}/retry', 'post', '201').headers ?? {})).toEqual(expect.arrayContaining(['location', 'idempotent-replayed']));
  // Every 503 carries Retry-After (src/api/error-handler.ts): each operation's 5XX says so.
  const without = Object.entries(doc().paths).flatMap(([path, ops]) =>
    Object.entries(ops).flatMap(([method, op]) => (op.responses['5XX']?.headers?.['retry-after'] ? [] : [`${method.toUpperCase()} ${path}`])),
  );
  expect(without).toEqual([]);
});
