// Each SVC_AUTH mode against each route class, over HTTP on a real server: who gets in, who gets
// 401 (no or bad credentials, with a Bearer challenge) or 403 (role too low, naming the role
// needed), and that a refusal body is `{detail}` and nothing else.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TOKEN_CACHE_TTL_MS } from '../../../src/api/api-token-cache.ts';
import { newApiToken } from '../../../src/auth/api-token.ts';
import { bodyDigest, requestOf, signIdentity } from '../../../src/auth/identity-assertion.ts';
import { roleAtLeast, type Role } from '../../../src/auth/roles.ts';
import { revokeApiToken } from '../../../src/db/api-token.repo.ts';
import { CLAIM_HEADERS } from '../../../src/protocol.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker, bearer, createApiToken, TEST_WORKER_TOKEN } from '../../helpers/auth.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { TEST_GATEWAY_SECRET } from '../../helpers/gateway.ts';

type Mode = 'none' | 'token' | 'gateway';
type Class = 'public' | 'worker' | 'data' | Role; // data: include_data=true (admin, or the worker token)
/** `headers`: fixed, or made for each request (a gateway assertion is bound to its method, target and body). */
type Caller = { name: string; kind: 'anonymous' | 'bad' | 'worker' | Role; headers: Record<string, string> | Bound };
type Bound = (method: string, path: string, body?: unknown) => Record<string, string>;

const SECRET_VALUE = 'pa55-word-that-must-never-leak';
const PLAYBOOK = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: wait, path: auth/wait }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n';

// One request (or more) per route class, with the status the right caller gets.
// `worker`: the route lets the worker token in too (credential reads a worker makes for a task).
type Probe = { cls: Class; worker?: true; method: string; path: string | (() => string); body?: unknown; ok: number };
let executionId = 0;
// The worker token reads credential data only for a command it holds whose tasks name it: the
// headers of the claim (src/protocol.ts CLAIM_HEADERS) on a command of auth/data, set by serverIn.
let dataClaim: Record<string, string> = {};
const DATA_PLAYBOOK = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: data, path: auth/data }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop, auth: db_auth }\n';
const PROBES: Probe[] = [
  { cls: 'public', method: 'GET', path: '/api/health', ok: 200 },
  { cls: 'public', method: 'GET', path: '/health', ok: 200 },
  { cls: 'public', method: 'GET', path: '/docs/json', ok: 200 },
  { cls: 'public', method: 'GET', path: '/redoc', ok: 200 },
  { cls: 'viewer', method: 'GET', path: '/api/executions', ok: 200 },
  { cls: 'viewer', method: 'GET', path: () => `/api/events/${executionId}`, ok: 200 },
  { cls: 'viewer', method: 'GET', path: '/api/catalog/playbooks', ok: 200 },
  { cls: 'viewer', method: 'GET', path: '/api/worker/pools', ok: 200 },
  { cls: 'viewer', worker: true, method: 'GET', path: '/api/credentials/db_auth', ok: 200 },
  { cls: 'viewer', method: 'GET', path: '/metrics', ok: 200 },
  { cls: 'operator', method: 'POST', path: '/api/run/playbook', body: { path: 'auth/wait' }, ok: 200 },
  { cls: 'operator', method: 'POST', path: '/api/catalog/playbook', body: { content: PLAYBOOK }, ok: 201 },
  { cls: 'operator', method: 'POST', path: () => `/api/executions/${executionId}/cancel`, body: {}, ok: 200 },
  { cls: 'admin', method: 'GET', path: '/api/keychain/catalog/1', ok: 200 },
  { cls: 'admin', method: 'POST', path: '/api/postgres/execute', body: { query: 'SELECT 1 AS one' }, ok: 200 },
  { cls: 'admin', method: 'DELETE', path: '/api/credentials/nothing_here', ok: 404 },
  { cls: 'admin', method: 'POST', path: '/api/credentials', body: { name: 'other_auth', type: 'bearer', data: { token: 'x' } }, ok: 200 },
  { cls: 'data', worker: true, method: 'GET', path: '/api/credentials/db_auth?include_data=true', ok: 200 },
  { cls: 'worker', method: 'POST', path: '/api/worker/pool/register', body: { name: 'probe-pool' }, ok: 200 },
  { cls: 'worker', method: 'POST', path: '/api/worker/claim', body: { worker_id: 'probe-pool', max: 1 }, ok: 200 },
];

/** What `caller` gets from `probe` in `mode`: 'ok', 401 or 403. */
function expected(mode: Mode, caller: Caller, probe: Probe): 'ok' | 401 | 403 {
  const cls = probe.cls;
  if (cls === 'public') return 'ok';
  if (cls === 'worker') return caller.kind === 'worker' ? 'ok' : 401;
  if (probe.worker && caller.kind === 'worker') return 'ok';
  if (mode === 'none') return 'ok';
  if (caller.kind === 'anonymous' || caller.kind === 'bad' || caller.kind === 'worker') return 401;
  return roleAtLeast(caller.kind, cls === 'data' ? 'admin' : cls) ? 'ok' : 403;
}

/** Starts a server in `mode` with a credential, a playbook and a running execution in it. */
async function serverIn(mode: Mode): Promise<{ t: TestApp; admin: Record<string, string> }> {
  // The matrix sends hundreds of refused credentials from one address: past token mode's limit on
  // them (test/integration/auth/audit-failed-token-limit.test.ts checks it).
  const t = await startTestApp({ SVC_AUTH: mode, SVC_AUTH_FAILURES_PER_MINUTE: '100000', ...(mode === 'gateway' ? { SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } : {}) });
  const admin = mode === 'none' ? {} : bearer(await createApiToken(t.deps.db, 'setup-admin', 'admin'));
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'db_auth', type: 'basic', data: { username: 'u', password: SECRET_VALUE } }, admin)).status).toBe(201);
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'other_auth', type: 'bearer', data: { token: 'x' } }, admin)).status).toBe(201);
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK }, admin)).status).toBe(201);
  // No worker runs here: the execution stays running, for reads and cancels.
  const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'auth/wait' }, admin);
  expect(run.status).toBe(200);
  executionId = run.body.execution_id;
  // A command whose task names db_auth, claimed by a worker: its claim lets the worker token read it.
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: DATA_PLAYBOOK }, admin)).status).toBe(201);
  const data = await http(t.url, 'POST', '/api/run/playbook', { path: 'auth/data' }, admin);
  const { rows } = await t.deps.db.query<{ command_id: number }>(`SELECT command_id FROM core.command WHERE execution_id = $1`, [data.body.execution_id]);
  const claimed = await http(t.url, 'POST', `/api/commands/${rows[0].command_id}/claim`, { worker_id: 'data-worker' }, asWorker);
  expect(claimed.status).toBe(200);
  dataClaim = { [CLAIM_HEADERS.command]: String(claimed.body.command_id), [CLAIM_HEADERS.attempt]: String(claimed.body.attempt), [CLAIM_HEADERS.worker]: 'data-worker' };
  return { t, admin };
}

/** Assertions as the gateway makes them, each bound to the request it is sent with. */
const assertion = (sub: string, role: string, expInSeconds = 60, secret = TEST_GATEWAY_SECRET): Bound => (method, path, sent) => {
  const exp = Math.floor(Date.now() / 1000) + expInSeconds;
  const req = requestOf(method, path);
  // The bytes http() sends for `sent`.
  const digest = bodyDigest(sent === undefined ? undefined : Buffer.from(typeof sent === 'string' ? sent : JSON.stringify(sent)));
  if (role === 'viewer' || role === 'operator' || role === 'admin') return { 'x-svc-identity': signIdentity({ sub, role, exp, req, body: digest }, secret) };
  // An unknown role cannot be signed through the typed API: sign the claims by hand.
  const body = Buffer.from(JSON.stringify({ sub, role, exp, req, body: digest })).toString('base64url');
  return { 'x-svc-identity': `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}` };
};

/** Checks every probe for every caller; returns the refusal bodies seen (as text). */
async function checkMatrix(t: TestApp, mode: Mode, callers: Caller[]): Promise<string[]> {
  const refusals: string[] = [];
  for (const caller of callers) {
    for (const probe of PROBES) {
      const path = typeof probe.path === 'function' ? probe.path() : probe.path;
      const res = await http(t.url, probe.method, path, probe.body, typeof caller.headers === 'function' ? caller.headers(probe.method, path, probe.body) : caller.headers);
      const want = expected(mode, caller, probe);
      const what = `${mode}: ${caller.name} ${probe.method} ${path} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      if (want === 'ok') {
        expect(res.status, what).toBe(probe.ok);
        continue;
      }
      expect(res.status, what).toBe(want);
      expect(Object.keys(res.body), what).toEqual(['detail']);
      expect(typeof res.body.detail, what).toBe('string');
      if (want === 401) expect(res.headers.get('www-authenticate'), what).toMatch(/^Bearer/);
      if (want === 403) expect(res.body.detail, what).toContain(`needs role ${probe.cls === 'data' ? 'admin' : probe.cls}`);
      refusals.push(JSON.stringify(res.body));
    }
  }
  return refusals;
}

/** A forged `command.completed` for the pending command of the running execution, refused and not stored. */
async function forgedReportIsRefused(t: TestApp, headers: Record<string, string> | Bound): Promise<void> {
  const sent = (method: string, path: string, body: unknown) => (typeof headers === 'function' ? headers(method, path, body) : headers);
  const { rows } = await t.deps.db.query<{ command_id: number; status: string }>(`SELECT command_id, status FROM core.command WHERE execution_id = $1`, [executionId]);
  const count = async () => (await t.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM core.event')).rows[0].n;
  const before = await count();
  const forged = { execution_id: executionId, command_id: rows[0].command_id, attempt: 1, worker_id: 'intruder', event_type: 'command.completed', result: { tasks: { t: { status: 'ok', data: 'forged' } } } };
  const report = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'intruder', events: [forged] }, sent('POST', '/api/worker/report', { worker_id: 'intruder', events: [forged] }));
  expect(report.status).toBe(401);
  expect(Object.keys(report.body)).toEqual(['detail']);
  const single = await http(t.url, 'POST', '/api/events', forged, sent('POST', '/api/events', forged));
  expect(single.status).toBe(401);
  expect(await count()).toBe(before);
  const after = await t.deps.db.query<{ status: string }>(`SELECT status FROM core.command WHERE command_id = $1`, [rows[0].command_id]);
  expect(after.rows[0].status).toBe(rows[0].status);
}

describe('SVC_AUTH=token', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  const tokens: string[] = [TEST_WORKER_TOKEN];
  beforeAll(async () => {
    ({ t, admin } = await serverIn('token'));
  });
  afterAll(async () => t?.close());

  it('lets each role in where it belongs: 401 without a valid token, 403 below the route role, never data in a refusal', async () => {
    const viewer = await createApiToken(t.deps.db, 'viewer-1', 'viewer');
    const operator = await createApiToken(t.deps.db, 'operator-1', 'operator');
    const adminToken = await createApiToken(t.deps.db, 'admin-1', 'admin');
    const revoked = await createApiToken(t.deps.db, 'revoked-1', 'admin');
    await revokeApiToken(t.deps.db, 'revoked-1');
    tokens.push(viewer, operator, adminToken, revoked);
    const callers: Caller[] = [
      { name: 'no credentials', kind: 'anonymous', headers: {} },
      { name: 'an unknown token', kind: 'bad', headers: bearer(newApiToken().token) },
      { name: 'a malformed token', kind: 'bad', headers: bearer('not-a-token') },
      { name: 'a revoked admin token', kind: 'bad', headers: bearer(revoked) },
      { name: 'a Basic header', kind: 'bad', headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      { name: 'viewer', kind: 'viewer', headers: bearer(viewer) },
      { name: 'operator', kind: 'operator', headers: bearer(operator) },
      { name: 'admin', kind: 'admin', headers: bearer(adminToken) },
      { name: 'the worker token', kind: 'worker', headers: { ...asWorker, ...dataClaim } },
    ];
    const refusals = await checkMatrix(t, 'token', callers);
    expect(refusals.length).toBeGreaterThan(50);
    for (const body of refusals) expect(body).not.toContain(SECRET_VALUE);
  });

  it('include_data=true is 403 for viewers and operators, and the data only for admins and workers', async () => {
    for (const role of ['viewer', 'operator'] as const) {
      const res = await http(t.url, 'GET', '/api/credentials/db_auth?include_data=true', undefined, bearer(await createApiToken(t.deps.db, `data-${role}`, role)));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: expect.stringContaining('needs role admin') });
    }
    expect((await http(t.url, 'GET', '/api/credentials/db_auth?include_data=true', undefined, admin)).body.data.password).toBe(SECRET_VALUE);
    expect((await http(t.url, 'GET', '/api/credentials/db_auth?include_data=true', undefined, { ...asWorker, ...dataClaim })).body.data.password).toBe(SECRET_VALUE);
  });

  it('answers with data no cache may keep: Cache-Control no-store (credential data above all)', async () => {
    const data = await http(t.url, 'GET', '/api/credentials/db_auth?include_data=true', undefined, admin);
    expect(data.body.data.password).toBe(SECRET_VALUE);
    expect(data.headers.get('cache-control')).toBe('no-store');
    expect((await http(t.url, 'GET', '/api/executions', undefined, admin)).headers.get('cache-control')).toBe('no-store');
    expect((await http(t.url, 'GET', '/api/executions')).headers.get('cache-control')).toBe('no-store'); // a refusal too
  });

  it('a forged worker report with an admin token (not the worker token) is refused and nothing is stored', async () => {
    await forgedReportIsRefused(t, admin);
    await forgedReportIsRefused(t, {});
  });

  it('a token revoked while cached stops working within API_TOKEN_CACHE_TTL_MS', async () => {
    const token = await createApiToken(t.deps.db, 'soon-revoked', 'viewer');
    tokens.push(token);
    expect((await http(t.url, 'GET', '/api/executions', undefined, bearer(token))).status).toBe(200);
    await revokeApiToken(t.deps.db, 'soon-revoked');
    const t0 = Date.now();
    await until('revoked token refused', async () => (await http(t.url, 'GET', '/api/executions', undefined, bearer(token))).status === 401, API_TOKEN_CACHE_TTL_MS + 2_000, 100);
    expect(Date.now() - t0).toBeLessThanOrEqual(API_TOKEN_CACHE_TTL_MS + 1_000);
    const row = (await t.deps.db.query<{ last_used_at: Date | null }>(`SELECT last_used_at FROM core.api_token WHERE name = 'soon-revoked'`)).rows[0];
    expect(row.last_used_at).toBeInstanceOf(Date);
  });

  it('records who started and who cancelled on the events', async () => {
    const operator = await createApiToken(t.deps.db, 'ci-bot', 'operator');
    tokens.push(operator);
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'auth/wait' }, bearer(operator));
    const id = run.body.execution_id;
    expect((await http(t.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test' }, admin)).body.status).toBe('cancelled');
    const events: Json[] = (await http(t.url, 'GET', `/api/events/${id}`, undefined, admin)).body.events;
    expect(events.find((e) => e.event_type === 'execution.started').context.requested_by).toEqual({ sub: 'ci-bot', role: 'operator', via: 'token' });
    expect(events.find((e) => e.event_type === 'execution.cancelled').context.requested_by).toEqual({ sub: 'setup-admin', role: 'admin', via: 'token' });
  });

  it('no token, API or worker, appears in the log or in any stored event', async () => {
    const stored = JSON.stringify((await t.deps.db.query('SELECT event_type, context, result, error FROM core.event')).rows);
    const logs = t.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const token of tokens) {
      expect(logs).not.toContain(token);
      expect(stored).not.toContain(token);
    }
    expect(logs).not.toContain(SECRET_VALUE);
  });
});

describe('SVC_AUTH=gateway', () => {
  let t: TestApp;
  beforeAll(async () => {
    ({ t } = await serverIn('gateway'));
  });
  afterAll(async () => t?.close());

  it('takes identities the gateway signed, and API tokens; refuses expired, forged and unknown-role assertions', async () => {
    const callers: Caller[] = [
      { name: 'no credentials', kind: 'anonymous', headers: {} },
      { name: 'an expired assertion', kind: 'bad', headers: assertion('alice', 'admin', -1) },
      { name: 'an assertion signed with another secret', kind: 'bad', headers: assertion('mallory', 'admin', 60, 'another-secret-of-the-same-length-0123456789') },
      { name: 'an assertion with an unknown role', kind: 'bad', headers: assertion('mallory', 'root') },
      { name: 'a malformed assertion', kind: 'bad', headers: { 'x-svc-identity': 'eyJzdWIiOiJ4In0' } },
      { name: 'an unknown token', kind: 'bad', headers: bearer(newApiToken().token) },
      { name: 'viewer assertion', kind: 'viewer', headers: assertion('vera', 'viewer') },
      { name: 'operator assertion', kind: 'operator', headers: assertion('otto', 'operator') },
      { name: 'admin assertion', kind: 'admin', headers: assertion('ada', 'admin') },
      { name: 'an operator API token', kind: 'operator', headers: bearer(await createApiToken(t.deps.db, 'program', 'operator')) },
      // A valid admin token does not rescue a bad assertion beside it: the assertion decides.
      { name: 'a bad assertion beside an admin token', kind: 'bad', headers: ((admin: Record<string, string>): Bound => (m, p, b) => ({ ...assertion('x', 'admin', -5)(m, p, b), ...admin }))(bearer(await createApiToken(t.deps.db, 'beside', 'admin'))) },
      { name: 'the worker token', kind: 'worker', headers: { ...asWorker, ...dataClaim } },
    ];
    await checkMatrix(t, 'gateway', callers);
    const expired = await http(t.url, 'GET', '/api/executions', undefined, assertion('alice', 'admin', -1)('GET', '/api/executions'));
    expect(expired.body.detail).toMatch(/expired/);
    const unknown = await http(t.url, 'GET', '/api/executions', undefined, assertion('alice', 'root')('GET', '/api/executions'));
    expect(unknown.body.detail).toMatch(/unknown role/);
  });

  it('records the asserted identity on execution.started and execution.cancelled', async () => {
    const alice = assertion('alice@example.com', 'operator');
    const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'auth/wait' }, alice('POST', '/api/run/playbook', { path: 'auth/wait' }))).body.execution_id;
    await http(t.url, 'POST', `/api/executions/${id}/cancel`, {}, assertion('bob@example.com', 'admin')('POST', `/api/executions/${id}/cancel`, {}));
    const events: Json[] = (await http(t.url, 'GET', `/api/events/${id}`, undefined, alice('GET', `/api/events/${id}`))).body.events;
    expect(events.find((e) => e.event_type === 'execution.started').context.requested_by).toEqual({ sub: 'alice@example.com', role: 'operator', via: 'gateway' });
    expect(events.find((e) => e.event_type === 'execution.cancelled').context.requested_by).toEqual({ sub: 'bob@example.com', role: 'admin', via: 'gateway' });
  });

  it('a forged worker report with an admin identity is refused and nothing is stored', async () => {
    await forgedReportIsRefused(t, assertion('ada', 'admin'));
  });
});

describe('SVC_AUTH=none (loopback)', () => {
  let t: TestApp;
  beforeAll(async () => {
    ({ t } = await serverIn('none'));
  });
  afterAll(async () => t?.close());

  it('every route but the worker routes is open, as a local admin; worker routes still take only the worker token', async () => {
    const callers: Caller[] = [
      { name: 'no credentials', kind: 'anonymous', headers: {} },
      { name: 'a wrong worker token', kind: 'bad', headers: bearer(`${TEST_WORKER_TOKEN}x`) },
      { name: 'a token of the same length', kind: 'bad', headers: bearer('y'.repeat(TEST_WORKER_TOKEN.length)) },
      { name: 'the worker token', kind: 'worker', headers: { ...asWorker, ...dataClaim } },
      { name: 'the worker token, scheme in lower case', kind: 'worker', headers: { authorization: `bearer ${TEST_WORKER_TOKEN}`, ...dataClaim } },
    ];
    await checkMatrix(t, 'none', callers);
  });

  it('a forged worker report without the worker token is refused and nothing is stored', async () => {
    await forgedReportIsRefused(t, {});
    await forgedReportIsRefused(t, bearer('y'.repeat(TEST_WORKER_TOKEN.length)));
  });

  it('records the local identity on execution.started', async () => {
    const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'auth/wait' })).body.execution_id;
    const events: Json[] = (await http(t.url, 'GET', `/api/events/${id}`)).body.events;
    expect(events[0].context.requested_by).toEqual({ sub: 'local', role: 'admin', via: 'local' });
  });
});
