// The OpenAPI document shows every route's answers: each operation has its success schema and the
// one error schema for 4xx and 5xx. Real answers match what the document says of them, and a
// response schema never changes an answer (it documents; JSON.stringify serializes).
import Fastify from 'fastify';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC } from '../../../src/api/access.ts';
import { errorAnswer, integer, responses } from '../../../src/api/answers.ts';
import { registerDocs } from '../../../src/api/docs.ts';
import { describeIssues, jsonSchema, valibotCompiler, valibotSchemaOf } from '../../../src/api/validation.ts';
import { registerRoutes } from '../../../src/app.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import type { Json } from '../../helpers/http.ts';

let t: TestApp;
// Each route's response schemas as it registers them: 'GET /api/executions/:execution_id' → status → JSON Schema.
const declared = new Map<string, Record<string, object>>();

beforeAll(async () => {
  t = await startTestApp();
  const probe = Fastify();
  probe.setValidatorCompiler(valibotCompiler); // as buildApp does: the routes' schemas are valibot's
  probe.addHook('onRoute', (route) => {
    const response: unknown = route.schema?.response;
    if (typeof response !== 'object' || response === null) return;
    const byStatus = Object.fromEntries(Object.entries(response).filter((e): e is [string, object] => typeof e[1] === 'object' && e[1] !== null));
    for (const method of [route.method].flat()) declared.set(`${method} ${route.url}`, byStatus);
  });
  await registerRoutes(probe, t.deps);
  await probe.ready();
  await probe.close();
});
afterAll(async () => t?.close());

const Media = v.record(v.string(), v.looseObject({ schema: v.optional(v.unknown()) }));
const OpenApi = v.object({
  paths: v.record(v.string(), v.record(v.string(), v.looseObject({ responses: v.record(v.string(), v.looseObject({ content: v.optional(Media) })) }))),
});

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Sends a request to the test app, expects `status`, and checks the answer against what its route
 * (`route`, as registered) documents for that status.
 */
async function answer(status: number, method: Method, route: string, url: string, opts: { payload?: object; headers?: Record<string, string> } = {}): Promise<Json> {
  const res = await t.app.inject({ method, url, ...opts });
  const what = `${method} ${url}`;
  expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
  const byStatus = declared.get(`${method} ${route}`);
  const json = byStatus?.[status] ?? byStatus?.[`${String(status)[0]}xx`];
  const schema = json && valibotSchemaOf(json);
  if (!schema) throw new Error(`${method} ${route} documents no ${status} answer`);
  const body: Json = res.json();
  const checked = v.safeParse(schema, body);
  expect(checked.success ? [] : describeIssues(checked.issues), `${what} ${status}: ${res.body}`).toEqual([]);
  return body;
}

const playbook = (path: string, rest: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: n, path: ${path} }\n${rest}`;
const NOOP = 'workflow:\n  - step: start\n    tool: { name: n, kind: noop }\n';

describe('response schemas', () => {
  it('every operation of the document has a success schema, and the error schema for 4XX and 5XX', () => {
    const doc = v.parse(OpenApi, t.app.swagger());
    const error = jsonSchema(errorAnswer);
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, responses: op.responses })));
    expect(operations.length).toBeGreaterThan(40);
    const withoutSuccess = operations.filter((op) => !Object.entries(op.responses).some(([s, r]) => s.startsWith('2') && Object.values(r.content ?? {}).some((m) => m.schema !== undefined)));
    expect(withoutSuccess.map((op) => op.name)).toEqual([]);
    for (const op of operations) {
      for (const range of ['4XX', '5XX']) expect(op.responses[range]?.content?.['application/json']?.schema, `${op.name} ${range}`).toEqual(error);
    }
  });

  it("names a wildcard route's parameters as the spec does: /api/catalog/playbook/{path}, not {*}", () => {
    const doc = v.parse(OpenApi, t.app.swagger());
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.includes('{*}'))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(['/api/catalog/playbook/{path}', '/api/triggers/{path}/{name}/{action}', '/api/hooks/{path}/{name}']));
    const params = v.parse(v.object({ get: v.object({ parameters: v.array(v.looseObject({ in: v.string(), name: v.string(), required: v.optional(v.boolean()) })) }) }), doc.paths['/api/catalog/playbook/{path}']);
    expect(params.get.parameters.filter((p) => p.in === 'path')).toEqual([expect.objectContaining({ name: 'path', required: true })]);
  });

  it("lists the spec's catalog, execution, event and batch endpoints at its paths, parameters named as it names them", () => {
    const doc = v.parse(OpenApi, t.app.swagger());
    const spec: [string, string][] = [
      ['post', '/api/catalog/playbook'],
      ['get', '/api/catalog/playbook/{path}'],
      ['get', '/api/catalog/playbooks'],
      ['post', '/api/catalog/register'],
      ['post', '/api/run/playbook'],
      ['post', '/api/execute'],
      ['get', '/api/execution/{execution_id}'],
      ['get', '/api/executions/{execution_id}'],
      ['get', '/api/events/{execution_id}'],
      ['post', '/api/executions/cleanup'],
      ['post', '/api/events/batch'],
      ['get', '/api/events/batch/{request_id}/status'],
      ['get', '/api/events/batch/{request_id}/stream'],
      ['post', '/api/mcp/mcp/{server_name}/lifecycle/{action}'],
    ];
    expect(spec.filter(([method, path]) => !doc.paths[path]?.[method]).map((e) => e.join(' '))).toEqual([]);
    const Parameters = v.object({ parameters: v.array(v.looseObject({ in: v.string(), name: v.string() })) });
    for (const path of ['/api/execution/{execution_id}', '/api/executions/{execution_id}', '/api/events/{execution_id}']) {
      expect(v.parse(Parameters, doc.paths[path].get).parameters.filter((p) => p.in === 'path').map((p) => p.name), path).toEqual(['execution_id']);
    }
  });

  it("a retry's 201 names the new execution in its Location, as the document says", async () => {
    await t.app.inject({ method: 'POST', url: '/api/catalog/playbook', payload: { content: playbook('answers/located', NOOP) } });
    const started = (await t.app.inject({ method: 'POST', url: '/api/run/playbook', payload: { path: 'answers/located' } })).json();
    await t.app.inject({ method: 'POST', url: `/api/executions/${started.execution_id}/cancel`, payload: {} });
    const retried = await t.app.inject({ method: 'POST', url: `/api/executions/${started.execution_id}/retry`, payload: {} });
    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.headers.location).toBe(`/api/executions/${retried.json().execution_id}`);
    const read = await t.app.inject({ method: 'GET', url: String(retried.headers.location) });
    expect(read.json()).toMatchObject({ execution_id: retried.json().execution_id, retry_of: started.execution_id });
    // Its command would be the next a worker of the tests below claims.
    await t.app.inject({ method: 'POST', url: `/api/executions/${retried.json().execution_id}/cancel`, payload: {} });
    const doc = v.parse(v.object({ paths: v.record(v.string(), v.record(v.string(), v.looseObject({ responses: v.record(v.string(), v.looseObject({ headers: v.optional(v.unknown()) })) }))) }), t.app.swagger());
    expect(doc.paths['/api/executions/{id}/retry'].post.responses['201'].headers).toEqual({
      location: { schema: { type: 'string' }, description: expect.any(String) },
      'idempotent-replayed': { schema: { type: 'string' }, description: expect.any(String) },
    });
  });

  it('marks a request body required exactly where a request without one is refused for it', async () => {
    const Operation = v.looseObject({ requestBody: v.optional(v.object({ required: v.boolean(), content: v.unknown() })) });
    const doc = v.parse(v.object({ paths: v.record(v.string(), v.record(v.string(), Operation)) }), t.app.swagger());
    const optional: string[] = [];
    const said: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!op.requestBody) continue;
        // Ids that exist nowhere: a request the body lets through then meets a 404, never a 422.
        const url = path.replace(/\{[^}]+\}/g, '987654');
        const res = await t.app.inject({ method: method.toUpperCase() as Method, url, headers: asWorker });
        const refusedForBody = res.statusCode === 422 && /body/.test(res.body);
        if (!op.requestBody.required) optional.push(`${method.toUpperCase()} ${path}`);
        if (refusedForBody !== op.requestBody.required) said.push(`${method.toUpperCase()} ${path}: required ${op.requestBody.required}, without a body ${res.statusCode} ${res.body.slice(0, 120)}`);
      }
    }
    expect(said).toEqual([]);
    expect(optional).toEqual(expect.arrayContaining(['POST /api/executions/{id}/cancel', 'POST /api/executions/{id}/retry', 'POST /api/executions/cleanup']));
  });

  it('types the parameters that are integers as integers, with the bounds and defaults the routes apply', async () => {
    const Parameter = v.looseObject({ in: v.string(), name: v.string(), schema: v.record(v.string(), v.unknown()), description: v.optional(v.string()) });
    const doc = v.parse(v.object({ paths: v.record(v.string(), v.record(v.string(), v.looseObject({ parameters: v.optional(v.array(Parameter)) }))) }), t.app.swagger());
    const param = (path: string, name: string) => doc.paths[path].get.parameters?.find((p) => p.name === name);
    expect(param('/api/executions', 'limit')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 500, default: 50 });
    expect(param('/api/executions', 'parent')).toMatchObject({ schema: { type: 'integer', minimum: 1 }, description: 'children of this execution' });
    expect(param('/api/events/{execution_id}', 'since_event_id')?.schema).toEqual({ type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 });
    expect(param('/api/events/{execution_id}', 'limit')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 5000, default: 1000 });
    expect(param('/api/events/{execution_id}', 'execution_id')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
    expect(param('/api/catalog/playbook/{path}', 'version')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 2147483647 });
    // Still text to the routes (a query string is): what the bounds say is what they take.
    expect((await t.app.inject({ method: 'GET', url: '/api/executions?limit=500' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/executions?limit=501' })).statusCode).toBe(422);
    // No mark the document is finished with is left in it.
    expect(JSON.stringify(t.app.swagger())).not.toMatch(/"x-(integer-parameters|optional-body)"/);
  });

  it("lists the spec's Health table: GET /health, /api/health and /metrics", () => {
    const doc = v.parse(OpenApi, t.app.swagger());
    for (const path of ['/health', '/api/health', '/metrics']) expect(Object.keys(doc.paths[path] ?? {}), path).toEqual(['get']);
  });

  it('document an answer and never change it: a field the schema omits or types otherwise is sent as made', async () => {
    const app = Fastify();
    await registerDocs(app);
    app.get('/typed', { schema: { response: responses({ 200: v.object({ n: integer }) }) }, config: { access: PUBLIC } }, async () => ({ n: '7', extra: { deep: [1.5, null] } }));
    const res = await app.inject({ method: 'GET', url: '/typed' });
    expect(res.body).toBe('{"n":"7","extra":{"deep":[1.5,null]}}');
    await app.close();
  });

  it('real answers of the routes match what the document says of them', async () => {
    const post = (route: string, payload: object, status = 200, url = route, headers?: Record<string, string>) => answer(status, 'POST', route, url, { payload, headers });
    const get = (route: string, url = route, status = 200) => answer(status, 'GET', route, url);
    const commandOf = async (id: number): Promise<number> => (await t.deps.db.query<{ command_id: number }>('SELECT command_id FROM core.command WHERE execution_id = $1', [id])).rows[0].command_id;

    // The catalog.
    const one = await post('/api/catalog/playbook', { content: playbook('answers/one', NOOP) }, 201);
    await post('/api/catalog/register', { content: playbook('answers/two', NOOP) }, 201);
    await post('/api/catalog/playbook', { content: playbook('answers/gate', 'workflow:\n  - step: start\n    wait: { signal: go }\n    next: done\n  - step: done\n    tool: { name: n, kind: noop }\n') }, 201);
    await post('/api/catalog/playbook', { content: playbook('answers/sched', `triggers:\n  - { name: nightly, kind: schedule, cron: "0 3 * * *" }\n${NOOP}`) }, 201);
    for (const url of ['/api/catalog/playbook/answers/one', '/api/catalog/playbook/answers/one/versions', '/api/catalog/playbook/answers/one/statechart']) await get('/api/catalog/playbook/*', url);
    await get('/api/catalog/playbooks');

    // A worker's round: register, claim, report (with claim-ahead), claim by id, a batch.
    const first = (await post('/api/run/playbook', { path: 'answers/one', payload: { any: { thing: [1] } } })).execution_id;
    await post('/api/worker/pool/register', { name: 'wa', capacity: 2, labels: { zone: 'a' } }, 200, '/api/worker/pool/register', asWorker);
    await post('/api/worker/pool/heartbeat', { name: 'wa', running: [] }, 200, '/api/worker/pool/heartbeat', asWorker);
    await get('/api/worker/pools');
    const [claimed] = (await post('/api/worker/claim', { worker_id: 'wa', max: 1, wait_ms: 0 }, 200, '/api/worker/claim', asWorker)).commands;
    const mine = { execution_id: first, command_id: claimed.command_id, attempt: claimed.attempt, worker_id: 'wa' };
    await post('/api/events', { ...mine, event_type: 'command.started' }, 200, '/api/events', asWorker);
    const second = (await post('/api/run/playbook', { path: 'answers/one' })).execution_id;
    const done = { event_type: 'command.completed', result: { tasks: { n: { status: 'ok', data: { open: [1, { x: null }] } } } } };
    const report = await post('/api/worker/report', { worker_id: 'wa', events: [{ ...mine, ...done }], claim: 1 }, 200, '/api/worker/report', asWorker);
    expect(report.commands.map((c: Json) => c.execution_id)).toEqual([second]);
    const third = (await post('/api/execute', { path: 'answers/two' })).execution_id;
    const byId = await post('/api/commands/:id/claim', { worker_id: 'wa' }, 200, `/api/commands/${await commandOf(third)}/claim`, asWorker);
    const batch = await post('/api/events/batch', { execution_id: third, worker_id: 'wa', events: [{ ...done, command_id: byId.command_id, attempt: byId.attempt }] }, 202, '/api/events/batch', asWorker);
    await get('/api/events/batch/:request_id/status', `/api/events/batch/${batch.request_id}/status`);

    // Executions: read, list, history, state, inspection; retry, control, signals, cleanup.
    for (const route of ['/api/executions/:execution_id', '/api/execution/:execution_id', '/api/events/:execution_id', '/api/executions/:id/state', '/api/executions/:id/inspect']) await get(route, route.replace(/:(execution_)?id/, String(first)));
    await get('/api/executions', '/api/executions?limit=2');
    await get('/api/executions/:id/steps/:step', `/api/executions/${first}/steps/start`);
    await post('/api/executions/:id/retry', { from_step: 'start' }, 201, `/api/executions/${first}/retry`);
    for (const action of ['pause', 'resume']) await answer(200, 'POST', `/api/executions/:id/${action}`, `/api/executions/${second}/${action}`);
    await post('/api/executions/:id/cancel', {}, 200, `/api/executions/${second}/cancel`);
    expect((await post('/api/executions/:id/cancel', {}, 200, `/api/executions/${second}/cancel`)).status).toBe('already_finished');
    const gate = (await post('/api/run/playbook', { path: 'answers/gate' })).execution_id;
    await get('/api/executions/:id/state', `/api/executions/${gate}/state`);
    await get('/api/executions/:execution_id', `/api/executions/${gate}`);
    await post('/api/executions/:id/signals/:name', { payload: { ok: true } }, 202, `/api/executions/${gate}/signals/go`);
    await post('/api/executions/cleanup', { dry_run: true });
    await post('/api/admin/command_reaper/sweep', {});
    await post('/api/worker/pool/deregister', { name: 'wa' }, 200, '/api/worker/pool/deregister', asWorker);

    // Credentials.
    const cred = { type: 'bearer', data: { token: 't0' }, tags: ['x'], meta: { owner: 'me' } };
    await post('/api/credentials', { name: 'c1', ...cred }, 201);
    await post('/api/credentials', { name: 'c1', ...cred }, 200);
    await get('/api/credentials');
    await get('/api/credentials/:name', '/api/credentials/c1');
    await get('/api/credentials/:name', '/api/credentials/c1?include_data=true');
    await answer(200, 'PUT', '/api/credentials/:name', '/api/credentials/c1', { payload: { data: { token: 't1' } } });
    await answer(200, 'PATCH', '/api/credentials/:name', '/api/credentials/c1', { payload: { data: { token: 't2' } } });
    await post('/api/credentials/:name/test', { url: 'http://127.0.0.1:1/' }, 200, '/api/credentials/c1/test');
    await get('/api/credential-types');
    await answer(200, 'DELETE', '/api/credentials/:name', '/api/credentials/c1');

    // The keychain, of the catalog entry registered above.
    const entry = `/api/keychain/${one.catalog_id}/k1`;
    await post('/api/keychain/:catalog_id/:keychain_name', { token_data: { access_token: 'a' }, credential_type: 'bearer', ttl_seconds: 60 }, 201, entry);
    await get('/api/keychain/:catalog_id/:keychain_name', entry);
    await get('/api/keychain/:catalog_id/:keychain_name', `/api/keychain/${one.catalog_id}/absent`);
    await get('/api/keychain/catalog/:catalog_id', `/api/keychain/catalog/${one.catalog_id}`);
    await answer(200, 'DELETE', '/api/keychain/:catalog_id/:keychain_name', entry);

    // SQL, triggers, MCP servers, agents, health.
    await post('/api/postgres/execute', { query: 'SELECT 1 AS one' });
    await get('/api/triggers');
    for (const action of ['pause', 'resume']) await post('/api/triggers/*', {}, 200, `/api/triggers/answers/sched/nightly/${action}`);
    await post('/api/triggers/*', { payload: { by: 'hand' } }, 202, '/api/triggers/answers/sched/nightly/fire');
    await post('/api/triggers/*', { from: '2026-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' }, 200, '/api/triggers/answers/sched/nightly/backfill');
    const mcp = 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: answers-mcp }\nendpoint: http://127.0.0.1:1/mcp\ntransport: streamable-http\nlifecycle: { status: answers/one }\n';
    await post('/api/catalog/register', { content: mcp, resource_type: 'mcp' }, 201);
    await get('/api/mcp/servers');
    await get('/api/mcp/servers/:name', '/api/mcp/servers/answers-mcp');
    await post('/api/mcp/mcp/:server_name/lifecycle/:action', {}, 202, '/api/mcp/mcp/answers-mcp/lifecycle/status');
    await get('/api/agents');
    await get('/api/health');

    // Error answers: not found, invalid input, a conflict.
    await get('/api/executions/:execution_id', '/api/executions/987654', 404);
    await post('/api/run/playbook', {}, 422);
    await answer(409, 'POST', '/api/executions/:id/pause', `/api/executions/${first}/pause`);
    await post('/api/hooks/*', {}, 404, '/api/hooks/answers/one/none');
  });
});
