// A database that takes no writes for now (a standby after a failover, or default_transaction_read_only
// set while an operator works) refused a start with SQLSTATE 25006, and the server answered 500
// `internal`, which a client does not send again. It is now a 503 database_unavailable with
// Retry-After, as for a database that is away (the connection that said so is discarded, so the
// pool's next one reaches the primary); reads are served meanwhile, and the start sent again once
// writes are taken is done once. Health said `ok` all along; it is now 503 `read_only`.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { noopPlaybook } from '../../helpers/batch.ts';
import { http } from '../../helpers/http.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
let s: ServerProcess;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
  s = await bed.server();
}, 60_000);
afterAll(async () => {
  await bed?.close();
});

/** Sets the database's default_transaction_read_only and ends the server's sessions, so its next ones take it. */
async function readOnly(on: boolean): Promise<void> {
  const name = new URL(bed.database.url).pathname.slice(1);
  await bed.db.query(on ? `ALTER DATABASE ${name} SET default_transaction_read_only = on` : `ALTER DATABASE ${name} RESET default_transaction_read_only`);
  await bed.db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
}

const start = () => http(s.base, 'POST', '/api/run/playbook', { path: 'ro/one', payload: {} }, { 'idempotency-key': 'ro-key' });
/**
 * Until a read is served: the first requests after the sessions ended may meet the pool's ended
 * connections (503s too), as many as the pool held, which on a loaded machine was more than one.
 */
const readsServed = () => until('a read served', async () => (await http(s.base, 'GET', '/api/executions')).status === 200, 20_000, 50);

it('answers a start and health 503 with Retry-After while the database takes no writes, and serves reads', async () => {
  expect((await http(s.base, 'POST', '/api/catalog/playbook', { content: noopPlaybook('ro/one', 1) })).status).toBe(201);
  await readOnly(true);
  await readsServed();
  // Health says so: a load balancer or a supervisor sees a server that takes no work.
  const health = await until('health says read_only', async () => {
    const h = await http(s.base, 'GET', '/api/health');
    return h.body.database === 'read_only' ? h : undefined;
  }, 20_000, 50);
  expect(health.status).toBe(503);
  expect(health.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
  expect(health.body).toMatchObject({ status: 'degraded', database: 'read_only' });
  const refused = await start();
  expect(refused.status, JSON.stringify(refused.body)).toBe(503);
  expect(refused.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
  expect(refused.body).toMatchObject({ detail: { code: 'database_unavailable' } });
  expect((await http(s.base, 'GET', '/api/executions')).status).toBe(200);

  await readOnly(false);
  await readsServed();
  // The bus's LISTEN session was ended too: ok once it has listened again.
  await until('health ok again', async () => (await http(s.base, 'GET', '/api/health')).body.status === 'ok', 20_000, 50);
  const first = await start();
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect((await start()).body.execution_id).toBe(first.body.execution_id);
  const { rows } = await bed.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE path = 'ro/one'`);
  expect(rows[0].n).toBe(1);
}, 60_000);
