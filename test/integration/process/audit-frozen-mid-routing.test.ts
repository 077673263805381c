// Two `svc server`s on one database; one is SIGSTOPped in the middle of routing (its statement
// waits for a table lock the test holds, then runs on in PostgreSQL while the process stands
// still, or is cancelled there), then SIGCONTed. A worker report it was routing, sent again to the
// other server, and a batch it had accepted with 202 and taken, are each applied once: the
// command completed once, each accepted event in the log once, one batch record, no gap in
// event_id; the frozen server's own answer, once it runs again, is the routing's (200) or a 503 to
// send again, and it serves on.
// A report's routing is one statement committed by itself: the frozen server holds no row lock
// past it. A schedule's tick is a transaction: frozen in it, the server holds its schedules until
// PostgreSQL ends the session (DB_IDLE_IN_TRANSACTION_MS, 30 s); then the other server fires the
// times due meanwhile, each once, and the resumed one fires nothing again.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { http, type Json } from '../../helpers/http.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
let a: ServerProcess;
let b: ServerProcess;
beforeAll(async () => {
  // A batch held by a processor that went silent is taken again 1 s (+5 s) after it was taken.
  bed = await ServerProcesses.open({ SVC_BATCH_PROCESSING_TIMEOUT_SECONDS: '1' });
  a = await bed.server();
  b = await bed.server();
  expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: noopPlaybook('frozen/two', 2) })).status).toBe(201);
}, 60_000);
afterEach(() => {
  a.proc.kill('SIGCONT');
  b.proc.kill('SIGCONT');
});
afterAll(async () => {
  await bed?.close();
});

/** An execution of frozen/two started on `s`, its first command claimed by hand as worker `hand`. */
async function claimedByHand(s: ServerProcess): Promise<{ id: number; cmd: Json }> {
  const id = (await http(s.base, 'POST', '/api/run/playbook', { path: 'frozen/two', payload: {} })).body.execution_id;
  const { rows } = await bed.db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [id]);
  return { id, cmd: await batchApi(s.base).claim(Number(rows[0].command_id), 'hand') };
}

/**
 * Runs `send` (which sends to server a) while the test holds core.command, which every routing
 * takes before it writes: a's statement waits; a is SIGSTOPped, the lock let go, and a's statement
 * runs on in PostgreSQL while a stands still, or (`cancel`) is cancelled first: a finds its routing
 * failed once it runs again. Resolves once a is frozen, with send's promise (wrapped: an async
 * function's promise would take on its outcome, and a frozen server answers nothing).
 */
async function freezeMidRouting<T>(send: () => Promise<T>, cancel: boolean): Promise<{ sent: Promise<T> }> {
  const lock = new pg.Client({ connectionString: bed.database.url });
  await lock.connect();
  try {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE core.command IN ACCESS EXCLUSIVE MODE');
    const sent = send();
    await until('a routing waiting for the lock', async () => (await bed.db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows.length > 0, 10_000, 50);
    // Its other statements (the routing's own) reach the lock too.
    await new Promise((r) => setTimeout(r, 500));
    a.proc.kill('SIGSTOP');
    // Every statement waiting is cancelled (b's too, if it has one: its periodic work tries again).
    if (cancel) await lock.query(`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`);
    await lock.query('COMMIT');
    return { sent };
  } finally {
    await lock.end();
  }
}

/** The execution's log: no gap, and `steps` each completed once. */
async function loggedOnce(id: number, steps: string[]): Promise<Json[]> {
  const { rows } = await bed.db.query(`SELECT event_id, event_type, step, context FROM core.event WHERE execution_id = $1 ORDER BY event_id`, [id]);
  expect(rows.map((r) => Number(r.event_id)), `execution ${id}: no gap`).toEqual(rows.map((_, i) => i + 1));
  expect(rows.filter((r) => r.event_type === 'command.completed').map((r) => r.step), `execution ${id}: each step done once`).toEqual(steps);
  return rows;
}

it.each([['runs on', false], ['is cancelled', true]])('a report whose routing was frozen (its statement %s), sent again to the other server, counts once; the frozen server serves again', async (_, cancel) => {
  const { id, cmd } = await claimedByHand(a);
  const report = { worker_id: 'hand', report_id: randomUUID(), events: commandReport(cmd).map((e) => ({ ...e, execution_id: id })) };
  const { sent: first } = await freezeMidRouting(() =>
    fetch(`${a.base}/api/worker/report`, { method: 'POST', headers: { 'content-type': 'application/json', ...asWorker }, body: JSON.stringify(report), signal: AbortSignal.timeout(60_000) })
      .then((r) => r.status)
      .catch((err: unknown) => String(err)),
    cancel,
  );
  // The worker gives up on a and sends the report again to b, as after a lost answer, until one is given.
  const t0 = Date.now();
  const again = await until('the report routed by b', async () => {
    const r = await http(b.base, 'POST', '/api/worker/report', report, asWorker);
    if (r.status !== 200 && r.status !== 503) throw new Error(`b answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.status === 200 ? r.body : undefined;
  }, 40_000, 500);
  console.log(`b routed the report after ${Date.now() - t0} ms: ${again.results.map((r: Json) => r.error ?? r.event_id).join(", ")}`);
  await loggedOnce(id, ['s1']);

  a.proc.kill('SIGCONT');
  const own = await first;
  console.log(`a's own answer once it runs again: ${own}`);
  expect([200, 503], `a's own answer after its freeze`).toContain(own);
  await until('a serves again', async () => (await http(a.base, 'GET', `/api/executions/${id}`)).status === 200, 20_000, 200);
  // Sent once more to a: stored once still.
  const third = await http(a.base, 'POST', '/api/worker/report', report, asWorker);
  expect(third.status, JSON.stringify(third.body)).toBe(200);
  // The rest runs on a real worker of a.
  const worker = await bed.worker(a.base, 1);
  await until('the execution completed', async () => (await http(a.base, 'GET', `/api/executions/${id}`)).body.status === 'completed', 20_000, 200);
  await worker.kill();
  await loggedOnce(id, ['s1', 's2']);
}, 90_000);

it.each([['runs on', false], ['is cancelled', true]])('a batch accepted with 202 by a server frozen while routing it (its statement %s) is processed once, by the other', async (_, cancel) => {
  const { id, cmd } = await claimedByHand(a);
  let accepted: Json;
  const { sent: frozen } = await freezeMidRouting(async () => {
    const r = await batchApi(a.base).post({ execution_id: id, worker_id: 'hand', events: commandReport(cmd) });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    accepted = r.body;
  }, cancel);
  await frozen;
  const settled = await batchApi(b.base).settled(accepted!.request_id, 40_000);
  expect(settled, JSON.stringify(settled)).toMatchObject({ state: 'completed', execution_id: id });

  a.proc.kill('SIGCONT');
  await until('a serves again', async () => (await http(a.base, 'GET', `/api/executions/${id}`)).status === 200, 20_000, 200);
  // What a does with the batch once it runs again (its routing, its end of the batch) changes nothing.
  await new Promise((r) => setTimeout(r, 3_000));
  expect(await batchApi(a.base).status(accepted!.request_id)).toMatchObject({ state: 'completed' });
  const rows = await loggedOnce(id, ['s1']);
  expect(rows.filter((e) => e.context?.batch_event_id).map((e) => Number(e.context.batch_event_id))).toEqual(accepted!.event_ids);
  expect(rows.filter((e) => e.event_type === 'batch.completed')).toHaveLength(1);
}, 90_000);

it('a schedule tick frozen in its transaction holds its schedule until the session ends; then the other server fires each time once', async () => {
  const fires = async (after: string) =>
    (await bed.db.query<{ fire_key: string; outcome: string }>(`SELECT fire_key, outcome FROM core.trigger_fire WHERE path = 'frozen/tick' AND fire_key > $1 ORDER BY fire_key`, [after])).rows;
  // b stands still while the schedule starts: a alone ticks it, and a is the one frozen in the tick.
  b.proc.kill('SIGSTOP');
  const lock = new pg.Client({ connectionString: bed.database.url });
  await lock.connect();
  let frozenAt: number;
  try {
    const yaml = `apiVersion: svc/v1
metadata: { name: tick, path: frozen/tick }
triggers:
  - { name: every_second, kind: schedule, cron: "* * * * * *", overlap: allow, catch_up: all, max_catch_up: 60 }
workflow:
  - step: s1
    tool: { name: t, kind: noop }
`;
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    await until('fires', async () => (await fires('')).length >= 2, 20_000, 100);
    // The next tick takes the schedule's row, and its start waits for core.command.
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE core.command IN ACCESS EXCLUSIVE MODE');
    await new Promise((r) => setTimeout(r, 1_500));
    a.proc.kill('SIGSTOP');
    b.proc.kill('SIGCONT');
    await lock.query('COMMIT');
    frozenAt = Date.now();
  } finally {
    await lock.end();
  }
  // b fires the times after the freeze once the frozen transaction is ended for it.
  const later = new Date(frozenAt + 3_000).toISOString();
  await until('b firing while a stands still', async () => (await fires(later)).length > 0, 45_000, 200);
  console.log(`b fired after ${Date.now() - frozenAt} ms of a's freeze`);
  a.proc.kill('SIGCONT');
  const resumed = new Date(Date.now() + 3_000).toISOString();
  await until('a fire after a runs again', async () => (await fires(resumed)).length > 0, 20_000, 200);
  expect((await http(a.base, 'POST', '/api/triggers/frozen/tick/every_second/pause')).status).toBe(200);

  const all = await fires('');
  expect(all.filter((f) => f.outcome !== 'started')).toEqual([]);
  const times = all.map((f) => Date.parse(f.fire_key));
  for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1], `gap after ${all[i - 1].fire_key}`).toBe(1000);
  const { rows: twice } = await bed.db.query(
    `SELECT context->'trigger'->>'fire_key' AS fire_key, count(*)::int AS n FROM core.event
      WHERE event_type = 'execution.started' AND context->'trigger'->>'name' = 'every_second' GROUP BY 1 HAVING count(*) > 1`,
  );
  expect(twice).toEqual([]);
  const { rows: ids } = await bed.db.query(`SELECT execution_id FROM core.execution WHERE path = 'frozen/tick'`);
  expect(ids.length).toBe(all.length);
  for (const r of ids) {
    const { rows } = await bed.db.query(`SELECT event_id FROM core.event WHERE execution_id = $1 ORDER BY event_id`, [r.execution_id]);
    expect(rows.map((e) => Number(e.event_id)), `execution ${r.execution_id}: no gap`).toEqual(rows.map((_, i) => i + 1));
  }
}, 90_000);
