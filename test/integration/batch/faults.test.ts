import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { inject } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { RETRY_AFTER_SECONDS } from '../../../src/errors.ts';

// Batch intake failures, each forced through configuration and a lock held by the test: an
// enqueue past its deadline, a full queue, processing past its timeout or failing, the database away.

const ONE_STEP = noopPlaybook('faults/one', 1);

/** A test app with these settings, a playbook, and a client of its database. */
async function setup(env: Record<string, string>) {
  const t = await startTestApp(env);
  const ex = executionApi(t.url);
  const b = batchApi(t.url);
  await ex.register(ONE_STEP);
  const connect = async () => {
    const c = new pg.Client({ connectionString: t.databaseUrl });
    c.on('error', () => {}); // terminated on purpose by the database-away test
    await c.connect();
    return c;
  };
  let db = await connect();
  const count = async (sql: string, params: unknown[] = []) => Number((await db.query(sql, params)).rows[0].n);
  return {
    t,
    b,
    get db() {
      return db;
    },
    /** A new connection of the test, after the database was away. */
    async reconnect() {
      await db.end().catch(() => {});
      db = await connect();
    },
    count,
    /** A running execution whose command w1 has claimed. */
    async claimed(): Promise<{ id: number; cmd: Json }> {
      const id = await ex.run('faults/one');
      const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING'`, [id]);
      return { id, cmd: await b.claim(Number(pending.rows[0].command_id), 'w1') };
    },
    /** What the database holds of an execution's batches: requests, markers. */
    async stored(id: number) {
      return {
        requests: await count('SELECT count(*) AS n FROM core.batch_request WHERE execution_id = $1', [id]),
        markers: await count(`SELECT count(*) AS n FROM core.event WHERE execution_id = $1 AND event_type = 'batch.accepted'`, [id]),
      };
    },
    /** Holds a lock on a connection of the test while fn runs. */
    async holding<T>(lockSql: string, unlockSql: string, fn: (release: () => Promise<void>) => Promise<T>): Promise<T> {
      const c = new pg.Client({ connectionString: t.databaseUrl });
      await c.connect();
      await c.query(lockSql);
      let held = true;
      const release = async () => {
        if (!held) return;
        held = false;
        await c.query(unlockSql);
      };
      try {
        return await fn(release);
      } finally {
        await release();
        await c.end();
      }
    },
    async close() {
      await db.end();
      await t.close();
    },
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;
// Every routing reads or writes core.command before it locks any row (its one write inserts
// commands), and accepting a batch never touches it: holding the table holds routings back.
const HOLD_ROUTINGS = 'BEGIN; LOCK TABLE core.command IN ACCESS EXCLUSIVE MODE';
const metric = async (url: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(`${url}/metrics`)).text())?.[1]);

describe('accepting', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({ SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '0.2', SVC_BATCH_ACCEPT_QUEUE_MAXSIZE: '1' });
  });
  afterAll(async () => s?.close());

  it('answers 503 ack_timeout with Retry-After when storing and enqueueing takes longer, and stores nothing', async () => {
    const { id, cmd } = await s.claimed();
    const body = { execution_id: id, worker_id: 'w1', events: commandReport(cmd) };
    // The execution's row is locked by the test for 2 s: the accept cannot store its marker.
    const answer = await s.holding(`BEGIN; SELECT 1 FROM core.execution WHERE execution_id = ${id} FOR UPDATE`, 'ROLLBACK', async () => {
      const t0 = performance.now();
      const r = await s.b.post(body);
      const ms = performance.now() - t0;
      await new Promise((ok) => setTimeout(ok, Math.max(0, 2_000 - ms)));
      return { r, ms };
    });
    expect(answer.r.status).toBe(503);
    expect(answer.r.body.detail.code).toBe('ack_timeout');
    expect(answer.r.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
    expect(answer.ms).toBeLessThan(1_500); // answered at the deadline, not when the lock went
    await new Promise((ok) => setTimeout(ok, 300)); // whatever was in flight has ended by now
    expect(await s.stored(id)).toEqual({ requests: 0, markers: 0 });
    expect(await metric(s.t.url, 'svc_batch_ack_timeout_total')).toBeGreaterThanOrEqual(1);
    // Sent again, it is accepted and processed.
    const again = await s.b.post(body);
    expect(again.status).toBe(202);
    expect((await s.b.settled(again.body.request_id)).state).toBe('completed');
  });

  it('answers 503 queue_unavailable with Retry-After while the queue holds SVC_BATCH_ACCEPT_QUEUE_MAXSIZE batches', async () => {
    const { id, cmd } = await s.claimed();
    const other = await s.claimed();
    await s.holding(HOLD_ROUTINGS, 'COMMIT', async (release) => {
      const first = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
      expect(first.status).toBe(202);
      expect(first.body.queue_depth).toBe(1);
      await until('the first batch to be taken', async () => (await s.b.status(first.body.request_id)).state === 'processing');
      expect(await metric(s.t.url, 'svc_batch_queue_depth')).toBe(1);
      const full = await s.b.post({ execution_id: other.id, worker_id: 'w1', events: commandReport(other.cmd) });
      expect(full.status).toBe(503);
      expect(full.body.detail.code).toBe('queue_unavailable');
      expect(full.body.detail.message).toContain('SVC_BATCH_ACCEPT_QUEUE_MAXSIZE');
      expect(full.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
      expect(await s.stored(other.id)).toEqual({ requests: 0, markers: 0 });
      await release();
      expect((await s.b.settled(first.body.request_id)).state).toBe('completed');
    });
    const later = await s.b.post({ execution_id: other.id, worker_id: 'w1', events: commandReport(other.cmd) });
    expect(later.status).toBe(202);
    expect((await s.b.settled(later.body.request_id)).state).toBe('completed');
  });
});

describe('processing', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({ SVC_BATCH_PROCESSING_TIMEOUT_SECONDS: '0.5' });
  });
  afterAll(async () => s?.close());

  it('fails a batch with processing_timeout when routing cannot finish in SVC_BATCH_PROCESSING_TIMEOUT_SECONDS, routing none of it', async () => {
    const { id, cmd } = await s.claimed();
    const failed = await s.holding(HOLD_ROUTINGS, 'COMMIT', async () => {
      const r = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
      expect(r.status).toBe(202);
      // Decided while the lock is still held: the routing gave up, nothing waits for the lock.
      return s.b.settled(r.body.request_id, 10_000);
    });
    expect(failed).toMatchObject({ state: 'failed', error_code: 'processing_timeout', commands_generated: 0 });
    expect(failed.message).toContain('SVC_BATCH_PROCESSING_TIMEOUT_SECONDS');
    const events = (await http(s.t.url, 'GET', `/api/events/${id}`)).body.events as Json[];
    const record = events.find((e) => e.event_type === 'batch.failed')!;
    expect(record.error).toMatchObject({ code: 'processing_timeout' });
    expect(record.context.request_id).toBe(failed.request_id);
    // Its ids hold refusals naming the failure (the log keeps no gap), nothing routed.
    const items = events.filter((e) => e.context?.batch_event_id);
    expect(items.map((e) => e.event_id)).toEqual(items.map((e) => e.context.batch_event_id));
    expect(items.map((e) => [e.event_type, e.context.refused, e.context.reported])).toEqual([
      ['command.refused', 'processing_timeout', 'command.started'],
      ['command.refused', 'processing_timeout', 'call.done'],
      ['command.refused', 'processing_timeout', 'command.completed'],
    ]);
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    const row = await s.db.query('SELECT status FROM core.command WHERE command_id = $1', [cmd.command_id]);
    expect(row.rows[0].status).toBe('CLAIMED');
    // The execution carries on: the same report, sent again, is routed.
    const again = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
    expect((await s.b.settled(again.body.request_id)).state).toBe('completed');
  });

  it('fails a batch it cannot route with processing_error, and the next batch is processed', async () => {
    const { id, cmd } = await s.claimed();
    const [first, second] = await s.holding(HOLD_ROUTINGS, 'COMMIT', async () => {
      const a = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(0, 1) });
      await until('the first batch to be taken', async () => (await s.b.status(a.body.request_id)).state === 'processing');
      const b = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(1) });
      // The second waits behind the first; its stored items are made unroutable meanwhile.
      await s.db.query(`UPDATE core.batch_request SET events = '[{"event_type": 42}, 7]' WHERE request_id = $1`, [b.body.request_id]);
      return [a, b];
    });
    await s.b.settled(first.body.request_id);
    const bad = await s.b.settled(second.body.request_id);
    expect(bad).toMatchObject({ state: 'failed', error_code: 'processing_error' });
    expect(bad.message).not.toMatch(/at |\.ts:/); // no stack, no internals
    const third = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
    expect((await s.b.settled(third.body.request_id)).state).toBe('completed');
  });
});

describe('an execution busy with a batch', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({ SVC_BATCH_PROCESSING_TIMEOUT_SECONDS: '60' });
  });
  afterAll(async () => s?.close());

  it('has its next batch processed within seconds, not when the lease of the first runs out', async () => {
    const { id, cmd } = await s.claimed();
    // The first batch is held by a processor (its routing waits for the lock) while idle
    // processors look for batches again and again, passing the held execution over.
    const first = await s.holding(HOLD_ROUTINGS, 'COMMIT', async () => {
      const a = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(0, 1) });
      await until('the first batch to be taken', async () => (await s.b.status(a.body.request_id)).state === 'processing');
      await new Promise((ok) => setTimeout(ok, 2_500));
      return a;
    });
    expect((await s.b.settled(first.body.request_id)).state).toBe('completed');
    const t0 = performance.now();
    const next = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(1) });
    expect((await s.b.settled(next.body.request_id, 20_000)).state).toBe('completed');
    // The lease is 65 s here: the execution is free again as soon as its first batch ended.
    expect(performance.now() - t0).toBeLessThan(6_000);
  });
});

describe('the database away', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup({});
  });
  afterAll(async () => s?.close());

  it('answers 503 enqueue_error with Retry-After, and accepts again once it is back', async () => {
    const { id, cmd } = await s.claimed();
    const name = new URL(s.t.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      const r = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
      expect(r.status).toBe(503);
      expect(r.body.detail.code).toBe('enqueue_error');
      expect(r.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
      await s.reconnect();
    }
    const back = await until('the intake to accept again', async () => {
      const r = await s.b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
      return r.status === 202 ? r : undefined;
    });
    expect((await s.b.settled(back.body.request_id)).state).toBe('completed');
  });
});
