// svc_batch_first_worker_claim_latency_seconds for a batch whose items another routing writes:
// a worker's report of another command of the same execution routes the batch's items (at their
// reserved ids) before the processor takes the batch, and the command an item issues is then
// issued by that report's routing. The command row must still name its batch (written by the
// statement that inserts it), so its first claim is observed, whoever claims it and however soon:
// a worker parked on this server (handed the command in the routing's own write), the reporting
// worker's claim-ahead (same statement), or a claim loop on another server right after the commit.
// Before, only the processor's own routing named the batch (a statement of its own), and a batch
// routed by a report never was observed, nor counted its commands in batch.completed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startBatchProcessor } from '../../../actors/batch-processor.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { batchApi, commandReport, type BatchApi } from '../../helpers/batch.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { claimNextCommands, type CommandRow } from '../../../src/db/command.repo.ts';
import { Db } from '../../../src/db/db.ts';

// start, then a and b in parallel; a goes on to a2.
const FORK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: fork, path: first-claim/fork }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: { mode: inclusive, arcs: [{ step: a }, { step: b }] }
  - step: a
    tool: { name: t, kind: noop }
    next: a2
  - step: b
    tool: { name: t, kind: noop }
  - step: a2
    tool: { name: t, kind: noop }
`;

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  // No processors while the report routes the batch: the batch waits, as it does when the
  // processor is busy or slower than the worker's next report.
  t = await startTestApp({}, { batchProcessors: false });
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(FORK);
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function count(url = t.url): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^svc_batch_first_worker_claim_latency_seconds_count (\S+)$/m.exec(text)?.[1]);
}

async function claimStep(id: number, step: string, worker: string): Promise<Json> {
  const r = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND step = $2 AND status = 'PENDING'`, [id, step]);
  expect(r.rows).toHaveLength(1);
  return b.claim(Number(r.rows[0].command_id), worker);
}

/** A worker's report (POST /api/worker/report) of `events` of execution `id`, claiming `claim` next commands. */
async function report(id: number, events: Json[], claim = 0): Promise<Json> {
  const r = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'w1', events: events.map((e) => ({ ...e, execution_id: id, worker_id: 'w1' })), claim }, asWorker);
  expect(r.status).toBe(200);
  return r.body;
}

/**
 * An execution at a and b, both claimed by w1, and a batch (accepted, not processed) that completes
 * a: the batch's item issues a2 when any routing of the execution writes it. Returns the execution,
 * b's command and the batch's request id and row id.
 */
async function batchWaiting(): Promise<{ id: number; cmdB: Json; requestId: string; batchId: string }> {
  const id = await ex.run('first-claim/fork');
  await report(id, commandReport(await claimStep(id, 'start', 'w1')));
  const cmdA = await claimStep(id, 'a', 'w1');
  const cmdB = await claimStep(id, 'b', 'w1');
  const r = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmdA) }, asWorker);
  expect(r.status).toBe(202);
  const row = await db.query(`SELECT batch_id::text FROM core.batch_request WHERE request_id = $1`, [r.body.request_id]);
  return { id, cmdB, requestId: r.body.request_id, batchId: row.rows[0].batch_id };
}

/** a2's row: it names the batch whose item issued it. */
async function a2(id: number): Promise<{ issued_by_batch: string | null; status: string }> {
  const r = await db.query(`SELECT issued_by_batch::text, status FROM core.command WHERE execution_id = $1 AND step = 'a2'`, [id]);
  expect(r.rows).toHaveLength(1);
  return r.rows[0];
}

/** Has the processor record the batch; its batch.completed counts a2 as the batch's command. */
async function recorded(id: number, requestId: string): Promise<void> {
  const stop = await startBatchProcessor(t.deps, { pollIntervalMs: 50 });
  try {
    expect((await b.settled(requestId)).state).toBe('completed');
  } finally {
    await stop();
  }
  const record = (await ex.events(id)).find((e) => e.event_type === 'batch.completed' && e.context.request_id === requestId)!;
  expect(record.context).toMatchObject({ recovered: true, routed: 3 });
  expect(record.result.context.commands_generated).toBe(1);
  expect((await b.status(requestId)).commands_generated).toBe(1);
}

describe('first claim of a command a batch issued through another routing', () => {
  it('is observed for a worker parked on the server whose report routing writes the batch', async () => {
    const { id, cmdB, requestId, batchId } = await batchWaiting();
    const before = await count();
    // Parked before the report: nothing is pending until its routing commits.
    const poll = http(t.url, 'POST', '/api/worker/claim', { worker_id: 'parked', max: 1, wait_ms: 15_000 }, asWorker);
    await new Promise((ok) => setTimeout(ok, 300));
    await report(id, commandReport(cmdB));
    const answer = await poll;
    expect(answer.status).toBe(200);
    expect(answer.body.commands.map((c: Json) => c.step)).toEqual(['a2']);
    expect(await a2(id)).toEqual({ issued_by_batch: batchId, status: 'CLAIMED' });
    expect((await count()) - before).toBe(1);
    await recorded(id, requestId);
    // The record observes nothing more: one first claim per batch.
    expect((await count()) - before).toBe(1);
  });

  it('is observed for the reporting worker’s claim-ahead, in the same statement that issues it', async () => {
    const { id, cmdB, requestId, batchId } = await batchWaiting();
    const before = await count();
    const answer = await report(id, commandReport(cmdB), 1);
    expect(answer.commands.map((c: Json) => c.step)).toEqual(['a2']);
    expect(await a2(id)).toEqual({ issued_by_batch: batchId, status: 'CLAIMED' });
    expect((await count()) - before).toBe(1);
    await recorded(id, requestId);
  });

  it('is observed for a claim loop on another server that takes it right after the commit', async () => {
    const { id, cmdB, requestId, batchId } = await batchWaiting();
    const other = await startSecondServer(t);
    const fast = new Db(t.databaseUrl, 1);
    try {
      const before = await count(other.url);
      let claimed: CommandRow[] = [];
      const loop = (async () => {
        const deadline = Date.now() + 15_000;
        while (!claimed.length && Date.now() < deadline) claimed = await claimNextCommands(fast, 'fast', 1, null);
        other.deps.metrics.batchFirstClaims.claimed(claimed);
      })();
      await report(id, commandReport(cmdB));
      await loop;
      expect(claimed.map((c) => c.step)).toEqual(['a2']);
      expect(String(claimed[0].issued_by_batch)).toBe(batchId);
      expect((await count(other.url)) - before).toBe(1);
      await recorded(id, requestId);
    } finally {
      await fast.close();
      await other.close();
    }
  });
});
