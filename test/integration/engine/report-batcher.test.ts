import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_BATCHES_IN_FLIGHT, ReportBatcher, type Report } from '../../../actors/report-batcher.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

// Group commit of worker reports: reports that arrive while routing transactions are in flight
// go together in one, and each gets its own event results and its own worker's next commands.

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const two = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: two, path: rb/two }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n    next: second\n  - step: second\n    tool: { name: b, kind: noop }\n';
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: two })).status).toBe(201);
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function startClaimed(worker: string): Promise<{ executionId: number; commandId: number; attempt: number }> {
  const executionId = (await http(t.url, 'POST', '/api/run/playbook', { path: 'rb/two' })).body.execution_id;
  // The app's pool: the starts run concurrently, and one pg client runs one query at a time.
  const { rows } = await t.deps.db.query<{ command_id: number }>(`SELECT command_id FROM core.command WHERE execution_id = $1`, [executionId]);
  const claim = await http(t.url, 'POST', `/api/commands/${rows[0].command_id}/claim`, { worker_id: worker }, asWorker);
  expect(claim.status).toBe(200);
  return { executionId, commandId: rows[0].command_id, attempt: claim.body.attempt };
}

const completed = (c: { executionId: number; commandId: number; attempt: number }, worker: string, task: string): Report => ({
  events: [
    { execution_id: c.executionId, command_id: c.commandId, attempt: c.attempt, worker_id: worker, event_type: 'command.started' },
    { execution_id: c.executionId, command_id: c.commandId, attempt: c.attempt, worker_id: worker, event_type: 'command.completed', result: { tasks: { [task]: { status: 'ok', data: c.executionId } } } },
  ],
  claim: { workerId: worker, max: 1 },
});

/**
 * Fills every in-flight slot of `batcher` with a report whose execution is locked, so what is
 * routed next queues up; `release()` lets them through and waits for them.
 */
async function fillInFlight(batcher: ReportBatcher): Promise<{ release(): Promise<void> }> {
  const blockers = await Promise.all(Array.from({ length: REPORT_BATCHES_IN_FLIGHT }, () => startClaimed('wx')));
  const locker = new pg.Client({ connectionString: t.databaseUrl });
  await locker.connect();
  await locker.query('BEGIN');
  // The routings of these executions wait on their rows (the one write moves each row on).
  await locker.query('SELECT 1 FROM core.execution WHERE execution_id = ANY($1::bigint[]) FOR UPDATE', [blockers.map((b) => b.executionId)]);
  const blocked = blockers.map((b) => batcher.route(completed(b, 'wx', 'a')));
  await new Promise((r) => setTimeout(r, 200));
  return {
    async release() {
      await locker.query('COMMIT');
      await locker.end();
      await Promise.all(blocked);
    },
  };
}

describe('report batcher', () => {
  it('routes queued reports of several workers in one transaction; each gets its results and its own next commands', async () => {
    const batcher = new ReportBatcher(t.deps);
    const waiting = await Promise.all([...Array.from({ length: 3 }, () => startClaimed('wa')), ...Array.from({ length: 3 }, () => startClaimed('wb'))]);
    const full = await fillInFlight(batcher);
    const routesBefore = (await t.deps.metrics.routeSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
    const queued = waiting.map((w, i) => batcher.route(completed(w, i < 3 ? 'wa' : 'wb', 'a')));
    await new Promise((r) => setTimeout(r, 100));
    await full.release();
    const outcomes = await Promise.all(queued);
    const routesAfter = (await t.deps.metrics.routeSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
    // The blockers' transactions, plus the queued six together (not one each).
    expect(routesAfter - routesBefore).toBeLessThanOrEqual(REPORT_BATCHES_IN_FLIGHT + 2);
    for (const [i, o] of outcomes.entries()) {
      const worker = i < 3 ? 'wa' : 'wb';
      expect(o.results).toHaveLength(2);
      for (const r of o.results) expect(r.event_id).toEqual(expect.any(Number));
      expect(o.claimed).toHaveLength(1);
      expect(o.claimed[0]).toMatchObject({ worker_id: worker, status: 'CLAIMED', step: 'second' });
    }
    // Every execution moved on to its second step, and each second command was handed out once.
    const handed = outcomes.flatMap((o) => o.claimed.map((c) => c.command_id));
    expect(new Set(handed).size).toBe(6);
    for (const w of waiting) {
      const { rows } = await db.query(`SELECT step, status, worker_id FROM core.command WHERE execution_id = $1 ORDER BY seq`, [w.executionId]);
      expect(rows.map((r) => [r.step, r.status])).toEqual([['start', 'COMPLETED'], ['second', 'CLAIMED']]);
    }
  });

  it('a batch with one bad report routes the others and fails only that one', async () => {
    const batcher = new ReportBatcher(t.deps);
    const good = await startClaimed('wg');
    const full = await fillInFlight(batcher);
    const bad = batcher.route({ events: [{ execution_id: 99_999_999, event_type: 'command.started' }] });
    // Observed at once: on a loaded machine it may reject before the assertion below is attached.
    bad.catch(() => {});
    const fine = batcher.route(completed(good, 'wg', 'a'));
    await new Promise((r) => setTimeout(r, 100));
    await full.release();
    await expect(bad).rejects.toMatchObject({ code: 'not_found' });
    const ok = await fine;
    expect(ok.results.every((r) => r.event_id !== null)).toBe(true);
    expect(ok.claimed).toHaveLength(1);
  });

  it('a report sent again while its first sending waits in the same batch is routed once; both get its answer', async () => {
    const batcher = new ReportBatcher(t.deps);
    const mine = await startClaimed('wr');
    const full = await fillInFlight(batcher);
    // The worker gave up waiting for its first sending's answer and sent it again: both queue for the next batch.
    const base = completed(mine, 'wr', 'a');
    const report: Report = { ...base, events: base.events.map((e) => ({ ...e, report_id: 'r-same' })), claim: { workerId: 'wr', max: 1, token: 'r-same' }, id: { workerId: 'wr', reportId: 'r-same' } };
    const sendings = [batcher.route(report), batcher.route(report)];
    await new Promise((r) => setTimeout(r, 100));
    await full.release();
    const [first, again] = await Promise.all(sendings);
    expect(again).toEqual(first);
    expect(first.results.map((r) => typeof r.event_id)).toEqual(['number', 'number']);
    expect(first.claimed).toHaveLength(1);
    const { rows } = await db.query(`SELECT event_type, count(*)::int AS n FROM core.event WHERE execution_id = $1 AND command_id = $2 GROUP BY 1 ORDER BY 1`, [mine.executionId, mine.commandId]);
    expect(rows).toEqual(['command.claimed', 'command.completed', 'command.issued', 'command.started'].map((event_type) => ({ event_type, n: 1 })));
    const held = await db.query(`SELECT count(*)::int AS n FROM core.command WHERE worker_id = 'wr' AND status = 'CLAIMED'`);
    expect(held.rows[0].n).toBe(1);
  });

  it('claim-ahead hands out older pending commands, oldest first, when the routed report issues none', async () => {
    const one = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: one, path: rb/one }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n';
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: one })).status).toBe(201);
    const first = (await http(t.url, 'POST', '/api/run/playbook', { path: 'rb/one' })).body.execution_id;
    for (let i = 0; i < 3; i++) expect((await http(t.url, 'POST', '/api/run/playbook', { path: 'rb/one' })).status).toBe(200);
    const { rows: own } = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1`, [first]);
    const claim = await http(t.url, 'POST', `/api/commands/${own[0].command_id}/claim`, { worker_id: 'wo' }, asWorker);
    expect(claim.status).toBe(200);
    const { rows: oldest } = await db.query(`SELECT command_id FROM core.command WHERE status = 'PENDING' ORDER BY command_id LIMIT 2`);
    // Completing a one-step execution issues no command: both come from the pending queue.
    const out = await new ReportBatcher(t.deps).route({ ...completed({ executionId: first, commandId: own[0].command_id, attempt: claim.body.attempt }, 'wo', 'a'), claim: { workerId: 'wo', max: 2 } });
    expect(out.results.every((r) => r.event_id !== null)).toBe(true);
    expect(out.claimed.map((c) => c.command_id)).toEqual(oldest.map((r) => r.command_id));
    for (const c of out.claimed) expect(c).toMatchObject({ worker_id: 'wo', status: 'CLAIMED', attempt: 1 });
    const { rows: stored } = await db.query(`SELECT status, worker_id FROM core.command WHERE command_id = ANY($1::bigint[])`, [oldest.map((r) => r.command_id)]);
    expect(stored).toEqual([{ status: 'CLAIMED', worker_id: 'wo' }, { status: 'CLAIMED', worker_id: 'wo' }]);
  });
});
