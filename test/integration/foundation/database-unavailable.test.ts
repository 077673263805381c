// With the database away, every route answers 503 with Retry-After and
// {detail: {code: 'database_unavailable', message}}: never a 500, never a hang.
import { createServer, type Server, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createLocalBus } from '../../../src/bus/command-bus.ts';
import { Db, DB_CONNECT_TIMEOUT_MS } from '../../../src/db/db.ts';
import { freePort } from '../../helpers/ports.ts';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';

let t: TestApp;
let away: { app: FastifyInstance; db: Db };

/** An app like the test app, but on a database URL where nothing listens (a stopped PostgreSQL). */
async function appOn(url: string): Promise<{ app: FastifyInstance; db: Db }> {
  const db = new Db(url, 2);
  const app = await buildApp({ ...t.deps, db, metrics: createMetrics(), bus: createLocalBus() });
  await app.ready();
  return { app, db };
}

beforeAll(async () => {
  t = await startTestApp();
  away = await appOn(`postgres://svc:pw@127.0.0.1:${await freePort()}/svc`);
});
afterAll(async () => {
  await away?.app.close();
  await away?.db.close();
  await t?.close();
});

// One valid request per route (valid, so only the database can be at fault).
const BATCH_ID = '00000000-0000-4000-8000-000000000000';
const event = { execution_id: 1, command_id: 1, attempt: 1, event_type: 'command.started' };
// A batch's item: the event without its execution, which the batch names (an item takes no other field).
const { execution_id: _batchExecution, ...batchItem } = event;
// The worker token names a claim on secret routes (CLAIM_HEADERS); checking it needs the database.
const CLAIM = { 'x-svc-command': '1', 'x-svc-attempt': '1', 'x-svc-worker': 'w' };
const REQUESTS: { method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH'; url: string; route: string; body?: unknown; code?: string; headers?: Record<string, string>; needsNoDatabase?: true }[] = [
  { method: 'POST', url: '/api/catalog/playbook', route: '/api/catalog/playbook', body: { content: 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: a, path: a/b }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n' } },
  { method: 'POST', url: '/api/catalog/register', route: '/api/catalog/register', body: { content: 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: a, path: a/b }\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n' } },
  { method: 'GET', url: '/api/catalog/playbook/a/b', route: '/api/catalog/playbook/{path}' },
  { method: 'GET', url: '/api/catalog/playbooks', route: '/api/catalog/playbooks' },
  { method: 'POST', url: '/api/run/playbook', route: '/api/run/playbook', body: { path: 'a/b' } },
  { method: 'POST', url: '/api/execute', route: '/api/execute', body: { path: 'a/b' } },
  { method: 'GET', url: '/api/executions/1', route: '/api/executions/{execution_id}' },
  { method: 'GET', url: '/api/execution/1', route: '/api/execution/{execution_id}' },
  { method: 'GET', url: '/api/executions', route: '/api/executions' },
  { method: 'POST', url: '/api/executions/1/cancel', route: '/api/executions/{id}/cancel', body: {} },
  { method: 'POST', url: '/api/executions/1/retry', route: '/api/executions/{id}/retry', body: {} },
  { method: 'GET', url: '/api/executions/1/steps/start', route: '/api/executions/{id}/steps/{step}' },
  { method: 'POST', url: '/api/executions/1/pause', route: '/api/executions/{id}/pause' },
  { method: 'POST', url: '/api/executions/1/resume', route: '/api/executions/{id}/resume' },
  { method: 'POST', url: '/api/executions/1/signals/go', route: '/api/executions/{id}/signals/{name}', body: { payload: { ok: true } } },
  { method: 'POST', url: '/api/events', route: '/api/events', body: event },
  { method: 'GET', url: '/api/events/1', route: '/api/events/{execution_id}' },
  { method: 'POST', url: '/api/worker/pool/register', route: '/api/worker/pool/register', body: { name: 'w' } },
  { method: 'POST', url: '/api/worker/pool/heartbeat', route: '/api/worker/pool/heartbeat', body: { name: 'w' } },
  { method: 'POST', url: '/api/worker/pool/deregister', route: '/api/worker/pool/deregister', body: { name: 'w' } },
  { method: 'GET', url: '/api/worker/pools', route: '/api/worker/pools' },
  { method: 'POST', url: '/api/commands/1/claim', route: '/api/commands/{id}/claim', body: { worker_id: 'w' } },
  { method: 'POST', url: '/api/worker/claim', route: '/api/worker/claim', body: { worker_id: 'w', max: 1, wait_ms: 0 } },
  { method: 'POST', url: '/api/worker/report', route: '/api/worker/report', body: { worker_id: 'w', events: [event] } },
  { method: 'POST', url: '/api/credentials', route: '/api/credentials', body: { name: 'c', type: 'bearer', data: { token: 't' } } },
  { method: 'GET', url: '/api/credentials', route: '/api/credentials' },
  { method: 'GET', url: '/api/credentials/c?include_data=true', route: '/api/credentials/{identifier}', headers: CLAIM },
  { method: 'DELETE', url: '/api/credentials/c', route: '/api/credentials/{name}' },
  { method: 'PUT', url: '/api/credentials/c', route: '/api/credentials/{name}', body: { type: 'bearer', data: { token: 't' } } },
  { method: 'PATCH', url: '/api/credentials/c', route: '/api/credentials/{name}', body: { data: { token: 't' } } },
  { method: 'POST', url: '/api/credentials/c/test', route: '/api/credentials/{name}/test', body: { url: 'http://127.0.0.1:1/' } },
  { method: 'GET', url: '/api/credential-types', route: '/api/credential-types', needsNoDatabase: true },
  { method: 'GET', url: '/api/worker/service-reader', route: '/api/worker/service-reader', headers: CLAIM },
  { method: 'GET', url: '/api/keychain/catalog/1', route: '/api/keychain/catalog/{catalog_id}', headers: CLAIM },
  { method: 'GET', url: '/api/keychain/1/k', route: '/api/keychain/{catalog_id}/{keychain_name}', headers: CLAIM },
  { method: 'POST', url: '/api/keychain/1/k', route: '/api/keychain/{catalog_id}/{keychain_name}', body: { token_data: { t: 'x' }, credential_type: 'bearer' }, headers: CLAIM },
  { method: 'DELETE', url: '/api/keychain/1/k', route: '/api/keychain/{catalog_id}/{keychain_name}', headers: CLAIM },
  { method: 'POST', url: '/api/keychain/1/k/renewal', route: '/api/keychain/{catalog_id}/{keychain_name}/renewal', headers: CLAIM },
  { method: 'DELETE', url: '/api/keychain/1/k/renewal?lease_id=00000000-0000-4000-8000-000000000000', route: '/api/keychain/{catalog_id}/{keychain_name}/renewal', headers: CLAIM },
  { method: 'POST', url: '/api/postgres/execute', route: '/api/postgres/execute', body: { query: 'SELECT 1' } },
  { method: 'POST', url: '/api/postgres/execute', route: '/api/postgres/execute', body: { query: 'SELECT 1', credential_name: 'pg_auth' } },
  { method: 'GET', url: '/api/health', route: '/api/health' },
  { method: 'GET', url: '/health', route: '/health' },
  { method: 'GET', url: '/metrics', route: '/metrics', needsNoDatabase: true },
  { method: 'POST', url: '/api/executions/cleanup', route: '/api/executions/cleanup', body: {} },
  { method: 'POST', url: '/api/admin/command_reaper/sweep', route: '/api/admin/command_reaper/sweep', body: {} },
  // The spec names the batch intake's own code for a database it cannot enqueue into.
  { method: 'POST', url: '/api/events/batch', route: '/api/events/batch', body: { execution_id: 1, events: [batchItem] }, code: 'enqueue_error' },
  { method: 'GET', url: `/api/events/batch/${BATCH_ID}/status`, route: '/api/events/batch/{request_id}/status' },
  { method: 'GET', url: `/api/events/batch/${BATCH_ID}/stream`, route: '/api/events/batch/{request_id}/stream' },
  { method: 'GET', url: '/api/executions/1/state', route: '/api/executions/{id}/state' },
  { method: 'GET', url: '/api/executions/1/inspect', route: '/api/executions/{id}/inspect' },
  { method: 'GET', url: '/api/agents', route: '/api/agents' },
  { method: 'GET', url: '/api/triggers', route: '/api/triggers' },
  { method: 'GET', url: '/api/limits', route: '/api/limits' },
  { method: 'GET', url: '/api/limits/tenant', route: '/api/limits/{name}' },
  { method: 'PUT', url: '/api/limits/tenant', route: '/api/limits/{name}', body: { concurrency: 2 } },
  { method: 'DELETE', url: '/api/limits/tenant', route: '/api/limits/{name}' },
  { method: 'POST', url: '/api/triggers/a/b/t/pause', route: '/api/triggers/{path}/{name}/{action}', body: {} },
  { method: 'POST', url: '/api/triggers/a/b/t/backfill', route: '/api/triggers/{path}/{name}/{action}', body: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } },
  { method: 'POST', url: '/api/hooks/a/b/t', route: '/api/hooks/{path}/{name}', body: { any: 'thing' } },
  { method: 'GET', url: '/api/mcp/servers', route: '/api/mcp/servers' },
  { method: 'GET', url: '/api/mcp/servers/demo', route: '/api/mcp/servers/{name}' },
  { method: 'POST', url: '/api/mcp/mcp/demo/lifecycle/status', route: '/api/mcp/mcp/{server_name}/lifecycle/{action}', body: {} },
  { method: 'GET', url: `/api/secrets/${BATCH_ID}`, route: '/api/secrets/{handle}', headers: CLAIM },
];

function expectUnavailable(res: { statusCode: number; headers: Record<string, unknown>; body: string }, what: string) {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(503);
  expect(res.headers['retry-after'], what).toBe(String(RETRY_AFTER_SECONDS));
  expect(res.body, what).not.toMatch(/\bat \S+ \(|\.ts:\d+|ECONNREFUSED|127\.0\.0\.1/);
}

describe('the database away', () => {
  it('answers 503 with Retry-After and a database_unavailable detail on every documented route', async () => {
    // Every route of the OpenAPI document has a request above.
    const documented = Object.entries((away.app.swagger() as { paths: Record<string, object> }).paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const covered = new Set(REQUESTS.map((r) => `${r.method} ${r.route}`));
    expect(documented.filter((r) => !covered.has(r))).toEqual([]);

    for (const r of REQUESTS) {
      const what = `${r.method} ${r.url}`;
      const res = await away.app.inject({ method: r.method, url: r.url, headers: { ...asWorker, ...r.headers }, ...(r.body === undefined ? {} : { payload: r.body as object }) });
      // A route that reads nothing from the database (the built-in credential types) still answers.
      if (r.needsNoDatabase) {
        expect(res.statusCode, what).toBe(200);
        continue;
      }
      expectUnavailable(res, what);
      // The health routes answer their own shape: which part is away.
      if (r.route !== '/api/health' && r.route !== '/health') expect(res.json(), what).toEqual({ detail: { code: r.code ?? 'database_unavailable', message: expect.any(String) } });
    }
    // The same requests against a reachable database get no 503: the requests were not at fault.
    for (const r of REQUESTS) {
      const res = await t.app.inject({ method: r.method, url: r.url, headers: { ...asWorker, ...r.headers }, ...(r.body === undefined ? {} : { payload: r.body as object }) });
      expect(res.statusCode, `${r.method} ${r.url}: ${res.body}`).not.toBeGreaterThanOrEqual(500);
    }
  });

  it('answers 503 once the connect timeout passes when the database accepts connections and never speaks', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    const hung = await appOn(`postgres://svc:pw@127.0.0.1:${address.port}/svc`);
    try {
      const t0 = performance.now();
      const res = await hung.app.inject({ method: 'POST', url: '/api/run/playbook', headers: asWorker, payload: { path: 'a/b' } });
      expectUnavailable(res, 'run against a silent database');
      expect(performance.now() - t0).toBeLessThan(DB_CONNECT_TIMEOUT_MS + 2_000);
    } finally {
      await hung.app.close();
      await hung.db.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('answers 503 while the database refuses new sessions (ALLOW_CONNECTIONS false: SQLSTATE 55000)', async () => {
    const db = new Db(t.databaseUrl, 1);
    const name = new URL(t.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: 'database_unavailable' });
      const refusing = await buildApp({ ...t.deps, db, metrics: createMetrics(), bus: createLocalBus() });
      try {
        expectUnavailable(await refusing.inject({ method: 'GET', url: '/api/executions', headers: asWorker }), 'list while sessions are refused');
      } finally {
        await refusing.close();
      }
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
      await db.close();
    }
  });

  it('lives through a checked-out connection losing its backend between two queries (57P01: no unhandled error event)', async () => {
    const db = new Db(t.databaseUrl, 1);
    try {
      const work = db.withClient(async (c) => {
        const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await t.deps.db.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        await new Promise((r) => setTimeout(r, 300)); // the termination arrives while nothing runs on it
        await c.query('SELECT 1');
      });
      await expect(work).rejects.toMatchObject({ code: 'database_unavailable' });
      // The pool dropped the broken connection: the next query gets a fresh one.
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });
});
