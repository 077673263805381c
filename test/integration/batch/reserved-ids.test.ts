import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startBatchProcessor } from '../../../actors/batch-processor.ts';
import { replay } from '../../../actors/hydrate.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';

// A batch's `event_ids` are the ids its events have in the execution's log: reserved when the
// batch is accepted, written when any routing of the execution folds them (before whatever it
// folds after), a refused item holding its id with a refusal record.

const TWO_STEPS = noopPlaybook('ids/two', 2);
const ONE_STEP = noopPlaybook('ids/one', 1);

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  // No processors: the tests start them when batches may be processed.
  t = await startTestApp({}, { batchProcessors: false });
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(TWO_STEPS);
  await ex.register(ONE_STEP);
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

/** Runs `fn` with the server's batch processors running. */
async function processing<T>(fn: () => Promise<T>): Promise<T> {
  const stop = await startBatchProcessor(t.deps, { pollIntervalMs: 50 });
  try {
    return await fn();
  } finally {
    await stop();
  }
}

async function claimNext(id: number, worker: string): Promise<Json> {
  const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING' ORDER BY seq LIMIT 1`, [id]);
  return b.claim(Number(pending.rows[0].command_id), worker);
}

/** The log by id, checked gapless. */
async function log(id: number): Promise<Map<number, Json>> {
  const events = await ex.events(id);
  expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
  return new Map(events.map((e) => [Number(e.event_id), e]));
}

describe('batch event_ids', () => {
  it('are the ids the events are stored under: several items, several batches of one execution, batches of several executions together', async () => {
    const a = await ex.run('ids/two');
    const c = await ex.run('ids/two');
    const cmdA = await claimNext(a, 'w1');
    const cmdC = await claimNext(c, 'w1');
    const report = (cmd: Json) => commandReport(cmd);
    // Sent together: one accept statement (group commit) may hold batches of both executions.
    const answers = await Promise.all([
      b.post({ execution_id: a, worker_id: 'w1', events: report(cmdA).slice(0, 2) }),
      b.post({ execution_id: c, worker_id: 'w1', events: report(cmdC).slice(0, 1) }),
      b.post({ execution_id: a, worker_id: 'w1', events: report(cmdA).slice(2) }),
      b.post({ execution_id: c, worker_id: 'w1', events: report(cmdC).slice(1) }),
    ]);
    for (const r of answers) expect(r.status).toBe(202);
    await processing(async () => {
      for (const r of answers) expect((await b.settled(r.body.request_id)).state).toBe('completed');
    });
    for (const [i, r] of answers.entries()) {
      const id = i % 2 === 0 ? a : c;
      const items = i % 2 === 0 ? (i === 0 ? report(cmdA).slice(0, 2) : report(cmdA).slice(2)) : i === 1 ? report(cmdC).slice(0, 1) : report(cmdC).slice(1);
      const stored = await log(id);
      expect(r.body.event_ids).toHaveLength(items.length);
      for (const [k, eventId] of (r.body.event_ids as number[]).entries()) {
        const e = stored.get(eventId)!;
        expect(e).toMatchObject({ event_type: items[k].event_type, command_id: items[k].command_id, context: { batch_event_id: eventId } });
      }
      // The marker sits just before its items.
      expect(stored.get(r.body.event_ids[0] - 1)).toMatchObject({ event_type: 'batch.accepted', context: { request_id: r.body.request_id, event_ids: r.body.event_ids } });
    }
    // Both executions moved on to their second step.
    const next = await db.query(`SELECT execution_id, step, status FROM core.command WHERE execution_id = ANY($1) ORDER BY execution_id, seq`, [[a, c]]);
    expect(next.rows.map((x) => `${x.step}:${x.status}`)).toEqual(['s1:COMPLETED', 's2:PENDING', 's1:COMPLETED', 's2:PENDING']);
  });

  it('are folded before a report that arrives while the batch waits: the report goes after them, and the log replays to the live state', async () => {
    const id = await ex.run('ids/two');
    const cmd = await claimNext(id, 'w1');
    const batch = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(0, 2) });
    expect(batch.status).toBe(202);
    const [started, done] = batch.body.event_ids as number[];
    // Accepted, not processed: the ids are reserved and empty.
    const reserved = await db.query(`SELECT last_event_id FROM core.execution WHERE execution_id = $1`, [id]);
    expect(Number(reserved.rows[0].last_event_id)).toBe(done);
    expect((await ex.events(id)).filter((e) => e.event_id >= started)).toEqual([]);
    // A synchronous report of the same command: its routing folds the batch's items first.
    const sync = await http(t.url, 'POST', '/api/events', {
      execution_id: id,
      command_id: cmd.command_id,
      attempt: cmd.attempt,
      worker_id: 'w1',
      event_type: 'command.completed',
      result: { tasks: { t: { status: 'ok', data: 'sync' } } },
    }, asWorker);
    expect(sync.status).toBe(200);
    expect(sync.body.event_id).toBeGreaterThan(done);
    const stored = await log(id);
    expect(stored.get(started)).toMatchObject({ event_type: 'command.started', context: { batch_event_id: started } });
    expect(stored.get(done)).toMatchObject({ event_type: 'call.done', context: { batch_event_id: done } });
    expect(stored.get(sync.body.event_id)).toMatchObject({ event_type: 'command.completed' });
    expect([...stored.values()].filter((e) => e.event_type === 'command.completed')).toHaveLength(1);
    // The whole log replayed from scratch is the state the routing holds.
    const row = (await db.query(`SELECT catalog_id, last_event_id FROM core.execution WHERE execution_id = $1`, [id])).rows[0];
    const live = t.deps.snapshots.get(id, Number(row.last_event_id));
    expect(live).toBeDefined();
    const compiled = await t.deps.cache.get(t.deps.db, Number(row.catalog_id));
    const replayed = replay(compiled.machine, [...stored.values()])!;
    expect(JSON.parse(JSON.stringify({ value: replayed.value, context: replayed.context }))).toEqual(JSON.parse(JSON.stringify({ value: live!.value, context: live!.context })));
    expect(replayed.context.steps.s1?.result).toBe('sync');
    // The processor then only records the batch: routed by the report's routing.
    const s = await processing(() => b.settled(batch.body.request_id));
    expect(s.state).toBe('completed');
    const record = (await ex.events(id)).find((e) => e.event_type === 'batch.completed')!;
    expect(record.context).toMatchObject({ routed: 2, refused: [], first_event_id: started, last_event_id: done, recovered: true });
  });

  it('of a report from a superseded attempt hold refusals, never a second completion: on a running execution', async () => {
    const id = await ex.run('ids/two');
    const cmd = await claimNext(id, 'w-old');
    // Claimed again: w-old's attempt is superseded.
    await db.query(`UPDATE core.command SET worker_id = 'w-new', attempt = attempt + 1 WHERE command_id = $1`, [cmd.command_id]);
    const r = await b.post({ execution_id: id, worker_id: 'w-old', events: commandReport(cmd) });
    await processing(() => b.settled(r.body.request_id));
    const stored = await log(id);
    for (const eventId of r.body.event_ids as number[]) {
      expect(stored.get(eventId)).toMatchObject({ event_type: 'command.refused', command_id: cmd.command_id, context: { batch_event_id: eventId, refused: 'stale_claim' } });
    }
    expect([...stored.values()].filter((e) => e.event_type === 'command.completed')).toEqual([]);
    expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status).toBe('running');
  });

  it('of a report from a superseded attempt hold refusals, never a second completion: on a finished execution', async () => {
    const id = await ex.run('ids/one');
    const cmd = await claimNext(id, 'w-old');
    await db.query(`UPDATE core.command SET worker_id = 'w-new', attempt = attempt + 1 WHERE command_id = $1`, [cmd.command_id]);
    const current = await b.post({ execution_id: id, worker_id: 'w-new', events: commandReport({ ...cmd, attempt: cmd.attempt + 1 }, 'new') });
    await processing(() => b.settled(current.body.request_id));
    expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'new' });
    const stale = await b.post({ execution_id: id, worker_id: 'w-old', events: commandReport(cmd, 'old') });
    const s = await processing(() => b.settled(stale.body.request_id));
    expect(s).toMatchObject({ state: 'completed', commands_generated: 0 });
    const stored = await log(id);
    for (const eventId of stale.body.event_ids as number[]) {
      expect(stored.get(eventId)).toMatchObject({ event_type: 'command.refused', context: { batch_event_id: eventId, refused: 'stale_claim' } });
    }
    const completions = [...stored.values()].filter((e) => e.event_type === 'command.completed');
    expect(completions.map((e) => e.event_id)).toEqual([current.body.event_ids[2]]);
    expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'new' });
  });

  it('a reader following the log stops before ids reserved and not written yet, so it never passes them by', async () => {
    const id = await ex.run('ids/two');
    const cmd = await claimNext(id, 'w1');
    const report = commandReport(cmd);
    const first = await b.post({ execution_id: id, worker_id: 'w1', events: report.slice(0, 1) });
    const second = await b.post({ execution_id: id, worker_id: 'w1', events: report.slice(1) });
    expect([first.status, second.status]).toEqual([202, 202]);
    // The second batch's marker is stored past the first one's empty id: the listing ends before that id.
    const hole = (first.body.event_ids as number[])[0];
    const seen = await ex.events(id);
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.max(...seen.map((e) => Number(e.event_id)))).toBe(hole - 1);
    await processing(async () => {
      for (const r of [first, second]) expect((await b.settled(r.body.request_id)).state).toBe('completed');
    });
    const all = await log(id);
    expect(all.get(hole)).toMatchObject({ context: { batch_event_id: hole } });
  });
});
