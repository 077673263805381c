// A statement the database cancels, by a statement_timeout or lock_timeout its operator set on the
// service's role or database (SQLSTATE 57014, 55P03: an ALTER TABLE, a VACUUM FULL or a REINDEX
// holding a table's lock meanwhile), or by pg_cancel_backend, rolls back and may be sent again.
// Every route it met answered 500 `internal` (the same wait past the service's own answer bound
// was a 503), and a worker whose reports met those 500s gave its finished results up after a few
// tries: the executions stayed running with the work done and lost. Now it is a 503
// database_unavailable with Retry-After; the worker reports once the lock is gone, each once.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { http } from '../../helpers/http.ts';
import { expectHeldCallsCompletedOnce } from '../../helpers/held-calls-completed.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
let target: HttpTarget;
let s: ServerProcess;
// The target holds each call until released: the commands are mid-run when the lock is taken.
let release: () => void = () => {};
let released: Promise<void> = Promise.resolve();

const HOLD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: hold, path: cancelled/hold }
workload: { target: "" }
workflow:
  - step: s1
    tool: { name: t, kind: http, method: GET, url: "{{ workload.target }}/hold?e={{ execution.id }}" }
`;

beforeAll(async () => {
  bed = await ServerProcesses.open({});
  target = await startHttpTarget(async (_req, res, recorded) => {
    if (recorded.path !== '/hold') return;
    await released;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
}, 60_000);
beforeEach(async () => {
  released = new Promise<void>((r) => (release = r));
  s = await bed.server();
  await bed.worker(s.base, 4);
  expect((await http(s.base, 'POST', '/api/catalog/playbook', { content: HOLD })).status).toBeLessThan(300);
}, 60_000);
afterEach(async () => {
  release();
  await bed.stopAll();
});
afterAll(async () => {
  await bed?.close();
  await target?.close();
});

/** Sets (or resets) `setting` for the database's new sessions and ends the server's, so they take it. */
async function databaseSetting(setting: string, value: string | null): Promise<void> {
  const name = new URL(bed.database.url).pathname.slice(1);
  await bed.db.query(value === null ? `ALTER DATABASE ${name} RESET ${setting}` : `ALTER DATABASE ${name} SET ${setting} = '${value}'`);
  await bed.db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
}

it.each([
  ['statement_timeout', '57014'],
  ['lock_timeout', '55P03'],
])('answers 503 with Retry-After when a %s cancels a statement, and loses no finished result', async (setting) => {
  const ids: number[] = [];
  for (let i = 0; i < 2; i++) ids.push((await http(s.base, 'POST', '/api/run/playbook', { path: 'cancelled/hold', payload: { target: target.url } })).body.execution_id);
  await until('both commands mid-run', () => ids.every((id) => target.requests.some((r) => r.path === '/hold' && Number(r.query.e) === id)), 20_000, 50);

  // An operator's bound, and a table's lock held meanwhile (by a session that keeps its own settings).
  await databaseSetting(setting, '300ms');
  const locker = new pg.Client({ connectionString: bed.database.url });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE core.execution IN ACCESS EXCLUSIVE MODE');
    for (const [method, path, body] of [
      ['GET', '/api/executions', undefined],
      ['GET', `/api/executions/${ids[0]}`, undefined],
      ['POST', '/api/run/playbook', { path: 'cancelled/hold', payload: { target: target.url } }],
    ] as const) {
      const t0 = Date.now();
      const res = await http(s.base, method, path, body, { 'idempotency-key': `cancelled-${setting}` });
      const what = `${method} ${path} after ${Date.now() - t0} ms: ${JSON.stringify(res.body)}`;
      expect(res.status, what).toBe(503);
      expect(res.headers.get('retry-after'), what).toBe(String(RETRY_AFTER_SECONDS));
      expect(res.body, what).toMatchObject({ detail: { code: 'database_unavailable' } });
      expect(JSON.stringify(res.body), what).not.toMatch(/timeout|canceling|lock/);
    }
    // The commands finish while the lock is held: the worker's reports meet it for a while (before,
    // it gave them up within about 2 s).
    release();
    await new Promise((r) => setTimeout(r, 6_000));
    await locker.query('COMMIT');
  } finally {
    await locker.end();
    await databaseSetting(setting, null);
  }

  await expectHeldCallsCompletedOnce(bed.db, target, ids);
}, 120_000);
