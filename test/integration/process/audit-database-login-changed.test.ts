// The service's database role had its password changed (a rotation done in the database before
// the new one reached SVC_DATABASE_URL, or a role whose login was taken away): every new
// connection fails with SQLSTATE 28P01 (28000 for a NOLOGIN role). Every route answered 500
// `internal`, which a client does not send again, and a worker whose finished results met those
// 500s gave their report up after a few tries (report_rejected, then "dropped"): work accepted
// and done was lost. Now it is a 503 database_unavailable with Retry-After, as for a database that
// is away; the worker keeps its results and reports them once the login works again, each once.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { expectHeldCallsCompletedOnce } from '../../helpers/held-calls-completed.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { freePort } from '../../helpers/ports.ts';
import { runSvc } from '../../helpers/process.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const ROLE = `svc_audit_login_${randomBytes(4).toString('hex')}`;
let bed: ServerProcesses;
let admin: pg.Client;
let target: HttpTarget;
let s: ServerProcess;
// The target holds each call until released: the commands are mid-run when the login changes.
let release: () => void = () => {};
const released = new Promise<void>((r) => (release = r));

beforeAll(async () => {
  bed = await ServerProcesses.open({});
  admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  const name = new URL(bed.database.url).pathname.slice(1);
  await admin.query(`CREATE ROLE ${ROLE} LOGIN CREATEROLE PASSWORD 'first-password'`);
  await admin.query(`ALTER DATABASE ${name} OWNER TO ${ROLE}`);
  target = await startHttpTarget(async (_req, res, recorded) => {
    if (recorded.path !== '/hold') return;
    await released;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  const url = new URL(bed.database.url);
  url.username = ROLE;
  url.password = 'first-password';
  s = await bed.server({ SVC_DATABASE_URL: url.toString() });
  await bed.worker(s.base, 4);
}, 90_000);
afterAll(async () => {
  release();
  await bed?.close();
  await target?.close();
  await admin?.query(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => {});
  await admin?.end();
});

/** Sets the role's password and ends its sessions, so the server's next connections log in again. */
async function password(value: string): Promise<void> {
  await admin.query(`ALTER ROLE ${ROLE} PASSWORD '${value}'`);
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [ROLE]);
}

const HOLD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: hold, path: login/hold }
workload: { target: "" }
workflow:
  - step: s1
    tool: { name: t, kind: http, method: GET, url: "{{ workload.target }}/hold?e={{ execution.id }}" }
`;

it('answers 503 with Retry-After while the service cannot log in, and loses no finished result', async () => {
  expect((await http(s.base, 'POST', '/api/catalog/playbook', { content: HOLD })).status).toBe(201);
  const ids: number[] = [];
  for (let i = 0; i < 2; i++) ids.push((await http(s.base, 'POST', '/api/run/playbook', { path: 'login/hold', payload: { target: target.url } })).body.execution_id);
  await until('both commands mid-run', () => target.requests.filter((r) => r.path === '/hold').length === 2, 20_000, 50);

  await password('second-password');
  const calls: [string, string, unknown, Record<string, string>][] = [
    ['GET', '/api/executions', undefined, {}],
    ['GET', `/api/executions/${ids[0]}`, undefined, {}],
    ['POST', '/api/run/playbook', { path: 'login/hold', payload: { target: target.url } }, { 'idempotency-key': 'login-key' }],
    ['POST', `/api/executions/${ids[0]}/signals/go`, { payload: {} }, {}],
    ['POST', '/api/worker/claim', { worker_id: 'hand', max: 1, wait_ms: 0 }, asWorker],
    ['POST', '/api/worker/pool/heartbeat', { name: 'hand' }, asWorker],
    ['GET', '/api/triggers', undefined, {}],
  ];
  for (const [method, path, body, headers] of calls) {
    const res = await http(s.base, method, path, body, headers);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(503);
    expect(res.headers.get('retry-after'), `${method} ${path}`).toBe(String(RETRY_AFTER_SECONDS));
    expect(res.body, `${method} ${path}`).toMatchObject({ detail: { code: 'database_unavailable' } });
    expect(JSON.stringify(res.body), `${method} ${path}`).not.toMatch(/password|authentication|svc_audit/);
  }
  const health = await http(s.base, 'GET', '/api/health');
  expect(health.status).toBe(503);
  expect(health.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));

  // The commands finish while the login fails: the worker's reports meet it for a while (before,
  // it gave them up within about 2 s).
  release();
  await new Promise((r) => setTimeout(r, 6_000));

  await password('first-password');
  await expectHeldCallsCompletedOnce(bed.db, target, ids);
}, 120_000);

// At start (`svc server`, `svc migrate`, `svc token`) the same refusal printed only 'the database is
// unavailable; try again shortly': the operator had to guess between a wrong password, a wrong
// address and a stopped database. What the database (or the socket) said now follows it.
it('says at start what the database said, not only that it is unavailable', async () => {
  const wrong = new URL(bed.database.url);
  wrong.username = ROLE;
  wrong.password = 'not-the-password';
  const login = await runSvc(['migrate'], { SVC_DATABASE_URL: wrong.toString() });
  expect(login.code, login.stderr).toBe(1);
  expect(login.stderr).toMatch(/^svc migrate: the database is unavailable; try again shortly \(password authentication failed for user "svc_audit_login_[0-9a-f]+"\)$/m);
  expect(login.stderr).not.toContain('not-the-password');
  const port = await freePort();
  const away = await runSvc(['migrate'], { SVC_DATABASE_URL: `postgres://svc:pw@127.0.0.1:${port}/svc` });
  expect(away.code, away.stderr).toBe(1);
  expect(away.stderr).toContain(`svc migrate: the database is unavailable; try again shortly (connect ECONNREFUSED 127.0.0.1:${port})`);
}, 60_000);

// The service's database gone for a while (renamed away, or dropped and made again by a restore):
// every new connection fails with SQLSTATE 3D000, and every route answered 500 `internal`.
it('answers 503 with Retry-After while the service database is gone, and serves again once it is back', async () => {
  const name = new URL(bed.database.url).pathname.slice(1);
  // A statement that names a database not there is the caller's error, not the service's database gone.
  const own = await http(s.base, 'POST', '/api/postgres/execute', { query: `SELECT pg_database_size('${name}_nowhere')` });
  expect(own.status, JSON.stringify(own.body)).toBe(400);
  bed.db.on('error', () => {}); // the bed's own session is ended too
  await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
  await admin.query(`ALTER DATABASE ${name} RENAME TO ${name}_away`);
  try {
    for (const [method, path, body] of [
      ['GET', '/api/executions', undefined],
      ['POST', '/api/run/playbook', { path: 'login/hold', payload: {} }],
      ['POST', '/api/worker/claim', { worker_id: 'hand', max: 1, wait_ms: 0 }],
    ] as const) {
      // The first may meet a pooled connection that was ended (a 503 too): each is asked twice.
      await http(s.base, method, path, body, asWorker);
      const res = await http(s.base, method, path, body, asWorker);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(503);
      expect(res.headers.get('retry-after'), `${method} ${path}`).toBe(String(RETRY_AFTER_SECONDS));
      expect(res.body, `${method} ${path}`).toMatchObject({ detail: { code: 'database_unavailable' } });
      expect(JSON.stringify(res.body), `${method} ${path}`).not.toContain(name);
    }
  } finally {
    await admin.query(`ALTER DATABASE ${name}_away RENAME TO ${name}`);
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
  }
  await until('the server serves again', async () => (await http(s.base, 'GET', '/api/executions')).status === 200, 30_000, 200);
}, 60_000);
