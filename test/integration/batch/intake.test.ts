import { request as httpRequest } from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { batchApi, commandReport, noopPlaybook, type BatchApi } from '../../helpers/batch.ts';
import { asWorker } from '../../helpers/auth.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

// The batch intake on a real server over HTTP: what a 202 means, idempotency, limits, the
// states of a request, its stream, and what processing writes.

const POLL_SECONDS = 0.05;
const TWO_STEPS = noopPlaybook('batch/two', 2);

let t: TestApp;
let ex: ExecutionApi;
let b: BatchApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp({
    SVC_BATCH_STATUS_STREAM_POLL_SECONDS: String(POLL_SECONDS),
    SVC_BATCH_MAX_EVENTS: '8',
    SVC_BATCH_MAX_BYTES: '4096',
  });
  ex = executionApi(t.url);
  b = batchApi(t.url);
  await ex.register(TWO_STEPS);
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

/** Claims the execution's pending command as `worker`. */
async function claimNext(id: number, worker: string): Promise<Json> {
  const pending = await db.query(`SELECT command_id FROM core.command WHERE execution_id = $1 AND status = 'PENDING' ORDER BY seq LIMIT 1`, [id]);
  return b.claim(Number(pending.rows[0].command_id), worker);
}

/** A running execution whose first command `worker` has claimed. */
async function claimedExecution(worker = 'w1'): Promise<{ id: number; cmd: Json }> {
  const id = await ex.run('batch/two');
  return { id, cmd: await claimNext(id, worker) };
}

/**
 * Holds routings back (see below) on a connection of the test while
 * `fn` runs: processing of its batches waits, accepting them does not.
 */
async function whileRoutingBlocked<T>(executionId: number, fn: (release: () => Promise<void>) => Promise<T>): Promise<T> {
  // Every routing reads or writes core.command before it locks any row (its one write inserts
  // commands), and accepting a batch never touches it: holding the table holds routings back
  // while batches are still accepted, claimed and read.
  const lock = new pg.Client({ connectionString: t.databaseUrl });
  await lock.connect();
  await lock.query('BEGIN');
  await lock.query('LOCK TABLE core.command IN ACCESS EXCLUSIVE MODE');
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await lock.query('COMMIT');
  };
  try {
    return await fn(release);
  } finally {
    await release();
    await lock.end();
  }
}

const count = async (sql: string, params: unknown[] = []) => Number((await db.query(sql, params)).rows[0].n);
const storedBatches = () => count('SELECT count(*) AS n FROM core.batch_request');
const markers = (id: number) => count(`SELECT count(*) AS n FROM core.event WHERE execution_id = $1 AND event_type = 'batch.accepted'`, [id]);

describe('POST /api/events/batch', () => {
  it('answers 202 with the spec body, and processing routes the events and issues the next command', async () => {
    const { id, cmd } = await claimedExecution();
    const r = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
    expect(r.status).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(['commands_generated', 'duplicate', 'event_ids', 'idempotency_key', 'queue_depth', 'request_id', 'status']);
    expect(r.body).toMatchObject({ status: 'accepted', commands_generated: 0, duplicate: false });
    expect(r.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.event_ids).toHaveLength(3);
    for (const e of r.body.event_ids) expect(Number.isInteger(e)).toBe(true);
    expect(r.body.queue_depth).toBeGreaterThanOrEqual(1);
    expect(typeof r.body.idempotency_key).toBe('string');
    // The 202 points at where its outcome will be: the batch's status.
    expect(r.headers.get('location')).toBe(`/api/events/batch/${r.body.request_id}/status`);

    const s = await b.settled(r.body.request_id);
    // The state under the name the 202 gave it (`status`), and under `state`.
    expect(s).toMatchObject({ request_id: r.body.request_id, execution_id: id, status: 'completed', state: 'completed', error_code: null, commands_generated: 1 });
    const events = await ex.events(id);
    const types = events.map((e) => e.event_type);
    // The marker and the three reported events at the ids the 202 gave them; then what folding
    // them appended after those ids: the claim (recorded with its first report), the step change
    // and the next command; the record.
    expect(types.slice(3)).toEqual(['batch.accepted', 'command.started', 'call.done', 'command.completed', 'command.claimed', 'step.exit', 'step.enter', 'command.issued', 'batch.completed']);
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    expect(r.body.event_ids).toEqual([5, 6, 7]);
    // Each routed event is stored under its item's id, and names it.
    expect(events.filter((e) => e.context?.batch_event_id).map((e) => [e.event_id, e.context.batch_event_id])).toEqual(r.body.event_ids.map((i: number) => [i, i]));
    const next = await db.query(`SELECT step, status FROM core.command WHERE execution_id = $1 ORDER BY seq`, [id]);
    expect(next.rows).toEqual([{ step: 's1', status: 'COMPLETED' }, { step: 's2', status: 'PENDING' }]);
  });

  it('takes the reports of a step whose name is as long as a request may name one (256 characters)', async () => {
    const name = `s${'x'.repeat(255)}`;
    await ex.register(noopPlaybook('batch/long-step', 1).replaceAll('step: s1', `step: ${name}`));
    const id = await ex.run('batch/long-step');
    const cmd = await claimNext(id, 'w1');
    expect(cmd.step).toBe(name);
    const r = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect((await b.settled(r.body.request_id)).state).toBe('completed');
    expect((await ex.wait(id)).status).toBe('completed');
    const longer = await b.post({ execution_id: id, worker_id: 'w1', events: [{ ...commandReport(cmd)[0], step: `${name}y` }] });
    expect(longer.status).toBe(422);
    expect(longer.body.detail.errors).toEqual(['events[0].step: must be at most 256 characters, got 257']);
  });

  it('has committed the events (the row processors claim) and the batch.accepted marker before it answers', async () => {
    const { id, cmd } = await claimedExecution();
    await whileRoutingBlocked(id, async () => {
      const r = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
      expect(r.status).toBe(202);
      // Read at once from another connection: everything the 202 stands for is there.
      const row = await db.query(`SELECT events, event_ids FROM core.batch_request WHERE request_id = $1`, [r.body.request_id]);
      expect(row.rows[0].events).toHaveLength(3);
      expect(row.rows[0].event_ids.map(Number)).toEqual(r.body.event_ids);
      const marker = await db.query(`SELECT context FROM core.event WHERE execution_id = $1 AND event_type = 'batch.accepted'`, [id]);
      expect(marker.rows.map((m) => m.context.request_id)).toEqual([r.body.request_id]);
    });
  });

  it('replays the first answer for the same Idempotency-Key and body, and refuses another body with 422', async () => {
    const { id, cmd } = await claimedExecution();
    const body = { execution_id: id, worker_id: 'w1', events: commandReport(cmd) };
    const key = { 'idempotency-key': `k-${id}` };
    const before = await storedBatches();
    await whileRoutingBlocked(id, async (release) => {
      const first = await b.post(body, key);
      expect(first.status).toBe(202);
      expect(first.body.idempotency_key).toBe(`k-${id}`);
      // While the first is still waiting to be processed.
      const again = await b.post({ worker_id: 'w1', events: body.events, execution_id: id }, key);
      expect(again.status).toBe(202);
      expect(again.body).toEqual({ ...first.body, duplicate: true });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      await release();
      expect((await b.settled(first.body.request_id)).state).toBe('completed');
      // And after it completed: still the first answer, nothing routed again.
      const late = await b.post(body, key);
      expect(late.body).toEqual({ ...first.body, duplicate: true });
      const other = await b.post({ ...body, worker_id: 'w2' }, key);
      expect(other.status).toBe(422);
      expect(other.body.detail.code).toBe('idempotency_key_reused');
      expect(other.body.detail.message).toContain(`k-${id}`);
    });
    expect(await storedBatches()).toBe(before + 1);
    expect(await markers(id)).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM core.event WHERE execution_id = $1 AND event_type = 'command.completed'`, [id])).toBe(1);
  });

  it('keeps keys apart by caller: the same key from another caller is another batch', async () => {
    const { id, cmd } = await claimedExecution();
    const body = { execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(0, 1) };
    const key = { 'idempotency-key': `shared-${id}` };
    const local = await b.post(body, key);
    const worker = await b.post(body, { ...key, ...asWorker });
    expect([local.status, worker.status]).toEqual([202, 202]);
    expect(worker.body.duplicate).toBe(false);
    expect(worker.body.request_id).not.toBe(local.body.request_id);
    expect((await b.post(body, { ...key, ...asWorker })).body).toEqual({ ...worker.body, duplicate: true });
    const bad = await b.post(body, { 'idempotency-key': 'x'.repeat(256) });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body.detail)).toContain('Idempotency-Key');
  });

  it('stores one batch for concurrent duplicates, on one server and across two', async () => {
    const { id, cmd } = await claimedExecution();
    const body = { execution_id: id, worker_id: 'w1', events: commandReport(cmd) };
    const key = { 'idempotency-key': `concurrent-${id}` };
    const before = await storedBatches();
    const second = await startSecondServer(t);
    const lock = new pg.Client({ connectionString: t.databaseUrl });
    await lock.connect();
    try {
      // The execution's row is held while the requests arrive: their transactions all begin, then
      // store one after another, each having looked for the key before the one ahead committed.
      await lock.query(`BEGIN; SELECT 1 FROM core.execution WHERE execution_id = ${id} FOR UPDATE`);
      const sent = Promise.all(Array.from({ length: 12 }, (_, i) => http(i % 2 ? second.url : t.url, 'POST', '/api/events/batch', body, key)));
      await new Promise((ok) => setTimeout(ok, 500));
      await lock.query('ROLLBACK');
      const answers = await sent;
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(202);
      const ids = new Set(answers.map((a) => a.body.request_id));
      expect(ids.size).toBe(1);
      expect(answers.filter((a) => !a.body.duplicate)).toHaveLength(1);
      expect(await storedBatches()).toBe(before + 1);
      expect(await markers(id)).toBe(1);
      await b.settled([...ids][0]);
    } finally {
      await lock.end();
      await second.close();
    }
  });

  it('refuses too many events with 422 and too many bytes with 413, storing nothing', async () => {
    const { id, cmd } = await claimedExecution();
    const before = await storedBatches();
    const many = Array.from({ length: 9 }, () => ({ event_type: 'command.heartbeat', command_id: cmd.command_id, attempt: cmd.attempt }));
    const tooMany = await b.post({ execution_id: id, worker_id: 'w1', events: many });
    expect(tooMany.status).toBe(422);
    expect(JSON.stringify(tooMany.body.detail)).toContain('SVC_BATCH_MAX_EVENTS');
    const big = await b.post({ execution_id: id, worker_id: 'w1', events: [{ event_type: 'call.done', command_id: cmd.command_id, attempt: cmd.attempt, context: { blob: 'x'.repeat(5000) } }] });
    expect(big.status).toBe(413);
    expect(JSON.stringify(big.body.detail)).toContain('SVC_BATCH_MAX_BYTES');
    const none = await b.post({ execution_id: id, worker_id: 'w1', events: [] });
    expect(none.status).toBe(422);
    const missing = await b.post({ execution_id: 999_999, events: [{ event_type: 'call.done' }] });
    expect(missing.status).toBe(404);
    expect(await storedBatches()).toBe(before);
    expect(await markers(id)).toBe(0);
  });

  it('answers 413 to a client that writes the whole over-limit body before it reads (curl -d @file), not a reset connection', async () => {
    const body = Buffer.from(JSON.stringify({ execution_id: 1, events: [{ event_type: 'call.done', context: { blob: 'x'.repeat(8 * 1024 * 1024) } }] }));
    const url = new URL(t.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname);
      socket.on('error', reject);
      socket.pause();
      socket.write(`POST /api/events/batch HTTP/1.1\r\nhost: ${url.host}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
      socket.write(body, (err) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        socket.resume();
      });
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(answer).toContain('SVC_BATCH_MAX_BYTES');
    // Without a Content-Length (chunked) a batch within the limit is taken as before.
    const { id, cmd } = await claimedExecution();
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(new URL('/api/events/batch', t.url), { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) }));
    });
    expect(chunked).toBe(202);
  });
});

describe('a batch request', () => {
  it('moves accepted -> processing -> completed, as its status and its stream show', async () => {
    const { id, cmd } = await claimedExecution();
    await whileRoutingBlocked(id, async (release) => {
      // The first batch is taken and waits for the lock; the second waits behind it, accepted.
      const first = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(0, 2) });
      await until('the first batch to be processing', async () => (await b.status(first.body.request_id)).state === 'processing');
      const second = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd).slice(2) });
      expect(await b.status(second.body.request_id)).toMatchObject({ status: 'accepted', state: 'accepted' });
      const stream = readStream(`${t.url}/api/events/batch/${second.body.request_id}/stream`);
      await new Promise((r) => setTimeout(r, 300));
      await release();
      const messages = await stream;
      expect(messages.map((m) => m.event)).toEqual(messages.map(() => 'status'));
      const states = messages.map((m) => JSON.parse(m.data).state);
      expect(states[0]).toBe('accepted');
      expect(states.at(-1)).toBe('completed');
      expect(states.filter((s, i) => s === states[i - 1])).toEqual([]); // one message per change
      expect(JSON.parse(messages.at(-1)!.data)).toMatchObject({ request_id: second.body.request_id, execution_id: id, commands_generated: 1 });
      expect((await b.status(first.body.request_id)).state).toBe('completed');
    });
  });

  it("names each stream message by its state, and answers a reconnection that saw the final state 204 (an EventSource's stop)", async () => {
    const { id, cmd } = await claimedExecution();
    const done = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
    await until('the batch completed', async () => (await b.status(done.body.request_id)).state === 'completed');
    const url = `${t.url}/api/events/batch/${done.body.request_id}/stream`;
    const text = await (await fetch(url)).text();
    expect(text).toMatch(/^id: 3\nevent: status\ndata: \{.*"state":"completed"/);
    // What a browser's EventSource sends when the stream ends: without the 204 it reconnects for ever.
    const again = await fetch(url, { headers: { 'last-event-id': '3' } });
    expect(again.status).toBe(204);
    expect(await again.text()).toBe('');
    // A reconnection that missed the end (it saw processing) gets the final state.
    const missed = await fetch(url, { headers: { 'last-event-id': '2' } });
    expect(missed.status).toBe(200);
    expect(await missed.text()).toContain('"state":"completed"');
  });

  it('answers 404 for an unknown request, on status and stream', async () => {
    for (const path of ['status', 'stream']) {
      expect((await http(t.url, 'GET', `/api/events/batch/00000000-0000-0000-0000-000000000000/${path}`)).status).toBe(404);
      expect((await http(t.url, 'GET', `/api/events/batch/not-a-request/${path}`)).status).toBe(404);
    }
  });

  it('records every timing of the spec in batch.completed, measured: parts within the whole', async () => {
    const { id, cmd } = await claimedExecution();
    const held = await whileRoutingBlocked(id, async (release) => {
      const r = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) });
      await until('the batch to be processing', async () => (await b.status(r.body.request_id)).state === 'processing');
      await new Promise((ok) => setTimeout(ok, 300)); // the lock is held this long at least
      await release();
      return r;
    });
    await b.settled(held.body.request_id);
    const [record] = (await ex.events(id)).filter((e) => e.event_type === 'batch.completed');
    const c = record.result.context;
    for (const field of [
      'processing_ms', 'pool_checkout_ms', 'lock_acquire_ms', 'state_load_ms', 'engine_total_ms', 'save_state_ms', 'save_state_calls',
      'save_state_terminal_lightweight_ms', 'save_state_terminal_lightweight_calls', 'persist_event_compat_ms', 'persist_event_compat_calls',
      'save_state_coalesced_count', 'commit_ms', 'transaction_ms', 'issue_commands_ms',
    ]) {
      expect(typeof c[field], field).toBe('number');
      expect(c[field], field).toBeGreaterThanOrEqual(0);
    }
    expect(c.actionable_event).toBe(true);
    expect(c.commands_generated).toBe(1);
    // The test held routings back for 300 ms after the batch was taken: the wait is measured
    // inside the transaction. The routing takes no lock (its write's guard stands for one).
    expect(c.engine_total_ms).toBeGreaterThan(200);
    expect(c.lock_acquire_ms).toBe(0);
    const eps = 0.01;
    expect(c.lock_acquire_ms + c.state_load_ms).toBeLessThanOrEqual(c.engine_total_ms + eps);
    expect(c.save_state_ms).toBeLessThanOrEqual(c.engine_total_ms + eps);
    expect(c.persist_event_compat_ms).toBeLessThanOrEqual(c.engine_total_ms + eps);
    expect(c.transaction_ms).toBeCloseTo(c.engine_total_ms + c.commit_ms, 2);
    expect(c.pool_checkout_ms + c.transaction_ms + c.issue_commands_ms).toBeLessThanOrEqual(c.processing_ms + eps);
    expect(c).toMatchObject({ save_state_calls: 1, persist_event_compat_calls: 1, save_state_terminal_lightweight_calls: 0 });
    // Seven events were appended to one execution written once (the claim, 3 reported, 3 from the step change).
    expect(c.save_state_coalesced_count).toBe(6);
  });

  it('refuses and records a report from a stale claim, in the same routing as worker reports', async () => {
    const { id, cmd } = await claimedExecution('w-old');
    // Another claim of the same command makes w-old's attempt stale.
    await db.query(`UPDATE core.command SET worker_id = 'w-new', attempt = attempt + 1 WHERE command_id = $1`, [cmd.command_id]);
    const r = await b.post({ execution_id: id, worker_id: 'w-old', events: commandReport(cmd) });
    const s = await b.settled(r.body.request_id);
    expect(s).toMatchObject({ state: 'completed', commands_generated: 0 });
    expect(s.message).toContain('stale_claim');
    const [record] = (await ex.events(id)).filter((e) => e.event_type === 'batch.completed');
    expect(record.context.refused.map((x: Json) => x.error)).toEqual(['stale_claim', 'stale_claim', 'stale_claim']);
    expect(record.context.refused.map((x: Json) => x.batch_event_id)).toEqual(r.body.event_ids);
    expect(record.result.context.actionable_event).toBe(false);
    const row = await db.query(`SELECT status FROM core.command WHERE command_id = $1`, [cmd.command_id]);
    expect(row.rows[0].status).toBe('CLAIMED');
  });

  it('leaves a finished execution as it was when late events arrive (terminal fast path)', async () => {
    const { id, cmd } = await claimedExecution();
    await b.settled((await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd, 'one') })).body.request_id);
    const cmd2 = await claimNext(id, 'w1');
    await b.settled((await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd2, 'two') })).body.request_id);
    const done = await ex.wait(id);
    expect(done).toMatchObject({ status: 'completed', progress: 100, result: 'two' });
    const row = async () => (await db.query(`SELECT status, progress, result, error, finished_at, snapshot FROM core.execution WHERE execution_id = $1`, [id])).rows[0];
    const before = await row();
    const late = await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd2, 'late') });
    const s = await b.settled(late.body.request_id);
    expect(s).toMatchObject({ state: 'completed', commands_generated: 0 });
    expect(await row()).toEqual(before);
    expect(await ex.wait(id)).toMatchObject({ status: 'completed', result: 'two' });
    const events = await ex.events(id);
    expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
    const tail = events.slice(events.findIndex((e) => e.context?.request_id === late.body.request_id));
    expect(tail.map((e) => e.event_type)).toEqual(['batch.accepted', 'command.started', 'call.done', 'command.completed', 'batch.completed']);
    expect(tail.at(-1)!.result.context).toMatchObject({ actionable_event: false, commands_generated: 0, save_state_calls: 0, save_state_terminal_lightweight_calls: 1 });
  });

  it('exposes the batch metrics of the spec with values', async () => {
    // A batch whose command is then claimed: the first-claim latency is observed.
    const { id, cmd } = await claimedExecution();
    await b.settled((await b.post({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) })).body.request_id);
    await claimNext(id, 'w1');
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('svc_batch_enqueue_latency_seconds_count')).toBeGreaterThan(0);
    expect(value('svc_batch_enqueue_latency_seconds_sum')).toBeGreaterThan(0);
    expect(value('svc_batch_first_worker_claim_latency_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(value('svc_batch_first_worker_claim_latency_seconds_sum')).toBeGreaterThan(0);
    expect(value('svc_batch_ack_timeout_total')).toBe(0);
    expect(value('svc_batch_queue_depth')).toBe(0);
  });

  it('is in the OpenAPI document with its body schema', async () => {
    const doc = (await http(t.url, 'GET', '/docs/json')).body;
    const post = doc.paths['/api/events/batch'].post;
    expect(post.responses['202']).toBeDefined();
    expect(JSON.stringify(post.requestBody)).toContain('"maxItems":8');
    expect(doc.paths['/api/events/batch/{request_id}/status'].get).toBeDefined();
    expect(doc.paths['/api/events/batch/{request_id}/stream'].get).toBeDefined();
  });

  it("documents the 202 as the spec types it (integers, an integer array) and its Location, as the status answer's", async () => {
    const doc = (await http(t.url, 'GET', '/docs/json')).body;
    const accepted = doc.paths['/api/events/batch'].post.responses['202'];
    const fields = accepted.content['application/json'].schema.properties;
    expect(fields.event_ids).toMatchObject({ type: 'array', items: { type: 'integer' } });
    for (const name of ['commands_generated', 'queue_depth']) expect(fields[name], name).toMatchObject({ type: 'integer' });
    expect(accepted.headers?.location?.schema).toEqual({ type: 'string' });
    const status = doc.paths['/api/events/batch/{request_id}/status'].get.responses['200'].content['application/json'].schema.properties;
    for (const name of ['execution_id', 'commands_generated']) expect(status[name], name).toMatchObject({ type: 'integer' });
    expect(status.updated_at).toMatchObject({ type: 'string', format: 'date-time' });
  });
});

/** Reads a server-sent-event stream to its end (the server closes it); returns its messages. */
async function readStream(url: string): Promise<{ event: string; data: string }[]> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const text = await res.text(); // resolves when the server ends the stream
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? '',
      data: /^data: (.*)$/m.exec(block)?.[1] ?? '',
    }));
}
