// A database that hangs (SIGSTOPped, or a network that drops its packets) keeps the connections a
// `svc server` already holds: a statement sent on one was never answered, so a list, a read, a
// start (keyed or not) and a worker's claim and report waited for ever, while /api/health said
// 503 within 2 s. Each is now a 503 with Retry-After within a statement's answer bound, and once
// the database answers again every execution finishes: the keyed start sent again is one
// execution, the report sent again counts once, and no execution's event log has a gap.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DB_ANSWER_TIMEOUT_MS, DB_CONNECT_TIMEOUT_MS } from '../../../src/db/db.ts';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';
import { asWorker } from '../../helpers/auth.ts';
import { commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { DatabasePath } from '../../helpers/database-path.ts';
import { http, type Json } from '../../helpers/http.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
let path: DatabasePath;
let s: ServerProcess;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
  path = DatabasePath.to(bed.database.url);
  await path.open();
  s = await bed.server({ SVC_DATABASE_URL: path.urlThrough(bed.database.url) });
}, 60_000);
afterAll(async () => {
  await bed?.stopAll();
  await path?.cut();
  await bed?.close();
});

/** `method target` with `body`: its status, Retry-After, body and time taken; `hung` when no answer came in `limitMs`. */
async function timed(method: string, target: string, body: unknown, headers: Record<string, string>, limitMs: number) {
  const t0 = Date.now();
  try {
    const res = await fetch(s.base + target, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(limitMs),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text(), ms: Date.now() - t0 };
  } catch {
    return { status: 'hung', retryAfter: null, body: '', ms: Date.now() - t0 };
  }
}

/** A request: method, target, body, headers. */
type Call = readonly [string, string, unknown, Record<string, string>];
const start = (key?: string): Call => ['POST', '/api/run/playbook', { path: 'frozen/three', payload: {} }, key ? { 'idempotency-key': key } : {}];

it('answers 503 with Retry-After within the bound while the database hangs, and loses nothing nor does anything twice after', async () => {
  expect((await http(s.base, 'POST', '/api/catalog/playbook', { content: noopPlaybook('frozen/three', 3) })).status).toBe(201);
  // A command claimed by hand before the freeze: its report is sent during it.
  const held = (await http(s.base, 'POST', '/api/run/playbook', { path: 'frozen/three', payload: {} })).body.execution_id;
  const claimed = await http(s.base, 'POST', '/api/worker/claim', { worker_id: 'hand', max: 1 }, asWorker);
  const cmd: Json = claimed.body.commands[0];
  expect(cmd.execution_id).toBe(held);
  const events = commandReport(cmd).map((e: Json) => ({ ...e, execution_id: held }));
  // A real worker runs the others, some of them mid-way when the database hangs.
  await bed.worker(s.base, 4);
  const started: number[] = [held];
  for (let i = 0; i < 6; i++) started.push((await http(s.base, 'POST', '/api/run/playbook', { path: 'frozen/three', payload: {} })).body.execution_id);
  // Connections pooled and warm, as on a serving server.
  await Promise.all(Array.from({ length: 8 }, () => http(s.base, 'GET', `/api/executions/${held}`)));

  path.freeze();
  const limit = DB_CONNECT_TIMEOUT_MS + DB_ANSWER_TIMEOUT_MS + 3_000;
  const calls: Call[] = [
    ['GET', '/api/executions', undefined, {}],
    ['GET', `/api/executions/${held}`, undefined, {}],
    start(),
    start('frozen-key'),
    ['POST', '/api/worker/claim', { worker_id: 'hand', max: 1 }, asWorker],
    ['POST', '/api/worker/report', { worker_id: 'hand', events }, asWorker],
    ['GET', '/api/health', undefined, {}],
  ];
  const answers = await Promise.all(calls.map(([m, t, b, h]) => timed(m, t, b, h, limit + 10_000)));
  for (const [i, res] of answers.entries()) {
    const what = `${calls[i][0]} ${calls[i][1]} after ${res.ms} ms`;
    expect(res.status, what).toBe(503);
    expect(res.retryAfter, what).toBe(String(RETRY_AFTER_SECONDS));
    expect(res.ms, what).toBeLessThan(limit);
    if (calls[i][1] !== '/api/health') expect(JSON.parse(res.body), what).toMatchObject({ detail: { code: 'database_unavailable' } });
  }

  // The database answers again (on the same address).
  await path.cut();
  await path.open();
  await until('the server serves again', async () => (await http(s.base, 'GET', '/api/executions')).status === 200, 30_000, 200);
  // Sent again as a client does after a 503: the keyed start is one execution, the report counts once.
  const keyed = await until('the keyed start', async () => {
    const r = await http(s.base, 'POST', '/api/run/playbook', { path: 'frozen/three', payload: {} }, { 'idempotency-key': 'frozen-key' });
    return r.status === 200 ? r.body.execution_id : undefined;
  }, 15_000, 200);
  const again = await http(s.base, 'POST', '/api/run/playbook', { path: 'frozen/three', payload: {} }, { 'idempotency-key': 'frozen-key' });
  expect(again.body.execution_id).toBe(keyed);
  started.push(keyed);
  const report = await http(s.base, 'POST', '/api/worker/report', { worker_id: 'hand', events }, asWorker);
  expect(report.status, JSON.stringify(report.body)).toBe(200);

  const ids: number[] = (await bed.db.query(`SELECT execution_id FROM core.execution WHERE path = 'frozen/three' ORDER BY execution_id`)).rows.map((r) => Number(r.execution_id));
  for (const id of started) expect(ids).toContain(id);
  // At most the unkeyed start answered 503 is there besides (its statement may have committed).
  expect(ids.length - started.length).toBeLessThanOrEqual(1);
  await until('every execution completed', async () => {
    const { rows } = await bed.db.query(`SELECT count(*)::int AS n FROM core.execution WHERE path = 'frozen/three' AND status <> 'completed'`);
    return rows[0].n === 0;
  }, 60_000, 250);
  for (const id of ids) {
    const { rows } = await bed.db.query('SELECT event_id, event_type, step, context FROM core.event WHERE execution_id = $1 ORDER BY event_id', [id]);
    expect(rows.map((r) => Number(r.event_id)), `execution ${id}: no gap`).toEqual(rows.map((_, i) => i + 1));
    // A report sent again after its answer was lost is answered already_reported: stored once.
    const done = rows.filter((r) => r.event_type === 'command.completed').map((r) => r.step);
    expect(done, `execution ${id}: each step done once`).toEqual(['s1', 's2', 's3']);
  }
}, 180_000);
