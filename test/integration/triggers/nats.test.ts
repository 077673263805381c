// NATS JetStream triggers on a real nats-server (SVC_TEST_NATS_URL, else one of this file's own
// with JetStream): one execution per message with the mapped payload; an ack only once the fire
// committed, at most max_in_flight at once, a failed fire delivered again; a consumer made anew
// redelivering everything and starting nothing twice; pause and resume heard by notification; a
// NATS restart; a removed trigger's consumer deleted.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TxTiming } from '../../../src/db/db.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { setTriggerPaused } from '../../../src/db/trigger.repo.ts';
import { natsDurableName } from '../../../src/triggers/nats-durable-name.ts';
import { startNatsSubscriptions } from '../../../src/triggers/nats-subscriptions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { until } from '../../helpers/until.ts';

const PASSWORD = `nats-pw-${randomBytes(6).toString('hex')}`;
// Reloads here come from notifications only: the periodic look is out of the way.
const NO_PERIODIC_RELOAD = { reloadIntervalMs: 3_600_000 };
let server: Awaited<ReturnType<typeof jetStreamServer>>;
let t: TestApp;
let api: ExecutionApi;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let subs: ReturnType<typeof startNatsSubscriptions> | undefined;
// Streams and subjects of this run: an external server is shared with other runs.
const run = randomBytes(4).toString('hex');
const stream = `SVC_T_${run}`;
const subjectOf = (topic: string) => `svc_t_${run}.${topic}`;

beforeAll(async () => {
  server = await jetStreamServer();
  t = await startTestApp();
  api = executionApi(t.url);
  nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  jsm = await jetstreamManager(nc);
  js = jetstream(nc);
  await jsm.streams.add({ name: stream, subjects: [`svc_t_${run}.>`] });
  // The login's password rides in the URL: it must never reach a log line.
  const u = new URL(server.url);
  const stored = await http(t.url, 'POST', '/api/credentials', { name: 'nats_auth', type: 'nats', data: { url: `nats://app:${PASSWORD}@${u.host}` } });
  expect(stored.status).toBe(201);
});
afterEach(async () => {
  await subs?.stop();
  subs = undefined;
});
afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => {});
  await nc?.close();
  await t?.close();
  await server?.close();
});

function playbook(path: string, subject: string, maxInFlight = 4): string {
  return `
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { order: null, source: none }
triggers:
  - name: orders
    kind: nats
    auth: nats_auth
    stream: ${stream}
    subject: ${subject}
    max_in_flight: ${maxInFlight}
    payload:
      order: "{{ message.json }}"
      source: "{{ message.subject }}#{{ message.seq }} {{ message.headers['x-tenant'] }} {{ trigger.kind }}"
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
}

type FireRow = { fire_key: string; outcome: string; execution_id: string | null; error: string | null };
const fires = async (path: string) => (await t.deps.db.query<FireRow>(`SELECT fire_key, outcome, execution_id, error FROM core.trigger_fire WHERE path = $1 ORDER BY fired_at`, [path])).rows;
const executionsOf = async (path: string) =>
  (await t.deps.db.query<{ execution_id: string }>(`SELECT execution_id FROM core.execution WHERE path = $1 ORDER BY execution_id`, [path])).rows.map((r) => Number(r.execution_id));
const startedEvent = async (id: number): Promise<Json> => (await api.events(id)).find((e) => e.event_type === 'execution.started')!;
const consumerOf = (path: string) => jsm.consumers.info(stream, natsDurableName(path, 'orders'));
const keyOf = async (seq: number) => `${stream}:${seq}@${(await jsm.streams.info(stream)).created}`;
const published = async (subject: string, n: number) => {
  const seqs: number[] = [];
  for (let i = 0; i < n; i++) seqs.push((await js.publish(subject, JSON.stringify({ id: i }), { headers: tenant() })).seq);
  return seqs;
};
const tenant = () => {
  const h = headers();
  h.set('x-tenant', 'acme');
  return h;
};
const allAcked = (path: string) =>
  until(`every message of ${path} acked`, async () => {
    const c = await consumerOf(path);
    return (c.num_ack_pending === 0 && c.num_pending === 0) || undefined;
  });

describe('NATS triggers', () => {
  it('starts one execution per message with the mapped payload and the trigger in execution.started', async () => {
    const path = `nats/orders_${run}`;
    const subject = subjectOf('orders.created');
    await api.register(playbook(path, subject));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    // Published right after the registration, maybe before the consumer exists: it delivers from the registration on.
    const acks = [];
    for (let i = 1; i <= 5; i++) acks.push(await js.publish(subject, JSON.stringify({ id: i, note: '{{ not a template }}' }), { headers: tenant() }));
    await js.publish(subjectOf('orders.other'), '{"id": 99}');
    // No x-tenant header: the payload cannot render, the fire is recorded as refused (and acked).
    const bad = await js.publish(subject, 'not json {{ 7 * 7 }}');
    await until('6 fires', async () => (await fires(path)).length === 6 || undefined);
    const rows = await fires(path);
    expect(await executionsOf(path)).toHaveLength(5);
    for (const [i, ack] of acks.entries()) {
      const key = await keyOf(ack.seq);
      const row = rows.find((r) => r.fire_key === key)!;
      expect(row.outcome).toBe('started');
      const started = await startedEvent(Number(row.execution_id));
      expect(started.context.trigger).toEqual({ name: 'orders', kind: 'nats', fire_key: key });
      // The message's text stays data: `{{ not a template }}` is not rendered.
      expect(started.context.input.workload).toEqual({ order: { id: i + 1, note: '{{ not a template }}' }, source: `${subject}#${ack.seq} acme nats` });
    }
    const badKey = await keyOf(bad.seq);
    const refused = rows.find((r) => r.fire_key === badKey)!;
    expect(refused).toMatchObject({ outcome: 'refused', execution_id: null });
    expect(refused.error).toContain('x-tenant');
    await allAcked(path);
    const consumer = await consumerOf(path);
    expect(consumer.config).toMatchObject({ durable_name: natsDurableName(path, 'orders'), filter_subject: subject, max_ack_pending: 4, ack_policy: 'explicit' });
    expect(consumer.num_redelivered).toBe(0);
    expect(t.logs.join('\n')).not.toContain(PASSWORD);
  });

  it('acks only after the fire committed, at most max_in_flight at once; a failed fire is delivered again and starts once', async () => {
    const path = `nats/inflight_${run}`;
    const subject = subjectOf('inflight');
    await api.register(playbook(path, subject, 4));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    await until('the consumer', () => consumerOf(path).catch(() => undefined));
    const lock = new pg.Client({ connectionString: t.databaseUrl });
    await lock.connect();
    try {
      // Fires can read but not write core.trigger_fire: each start waits inside its transaction.
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE core.trigger_fire IN SHARE MODE');
      const seqs = await published(subject, 10);
      const blocked = async () =>
        (await lock.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`)).rows.map((r) => r.pid);
      await until('4 fires waiting on the lock', async () => (await blocked()).length === 4 || undefined);
      await new Promise((r) => setTimeout(r, 500));
      // Not one acked while its start has not committed, and no fifth taken.
      expect((await blocked()).length).toBe(4);
      const mid = await consumerOf(path);
      expect(mid.num_ack_pending).toBe(4);
      expect(mid.num_pending).toBe(6);
      // The 4 starts fail (a database error): their messages are nak'd, delivered again, and fired once.
      for (const pid of await blocked()) await lock.query('SELECT pg_cancel_backend($1)', [pid]);
      // Counted by their log lines, not by no backend waiting: the nak'd fires free their slots and
      // the next messages may be taken (and wait on the lock) before a poll sees none waiting.
      const notFired = () => t.logs.filter((l) => l.includes('NATS message not fired') && l.includes(path)).length;
      await until('the cancelled fires to give up', async () => notFired() >= 4 || undefined);
      await lock.query('COMMIT');
      await until('10 fires', async () => (await fires(path)).length === 10 || undefined);
      await allAcked(path);
      const rows = await fires(path);
      expect(rows.map((r) => r.fire_key).sort()).toEqual((await Promise.all(seqs.map(keyOf))).sort());
      expect(rows.every((r) => r.outcome === 'started')).toBe(true);
      expect(await executionsOf(path)).toHaveLength(10);
      // The 4 that failed were nak'd (each logged), not acked.
      expect(notFired()).toBe(4);
    } finally {
      await lock.query('ROLLBACK').catch(() => {});
      await lock.end();
    }
  });

  it('a consumer made anew delivers every message again and starts nothing twice', async () => {
    const path = `nats/again_${run}`;
    const subject = subjectOf('again');
    await api.register(playbook(path, subject));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    await published(subject, 8);
    await until('8 fires', async () => (await fires(path)).length === 8 || undefined);
    await allAcked(path);
    await subs.stop();
    // Its place in the stream is lost: the new consumer delivers all 8 again, from the registration on.
    await jsm.consumers.delete(stream, natsDurableName(path, 'orders'));
    const duplicatesBefore = await duplicateCount();
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    await until('the consumer again', () => consumerOf(path).catch(() => undefined));
    await allAcked(path);
    expect(await duplicateCount()).toBe(duplicatesBefore + 8);
    expect(await executionsOf(path)).toHaveLength(8);
    expect(await fires(path)).toHaveLength(8);
  });

  it('pause stops taking messages and resume takes what was published meanwhile (heard by notification)', async () => {
    const path = `nats/pause_${run}`;
    const subject = subjectOf('pause');
    await api.register(playbook(path, subject));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    await published(subject, 2);
    await until('2 fires', async () => (await fires(path)).length === 2 || undefined);
    await setTriggerPaused(t.deps.db, path, 'orders', true, null);
    // Stopped: no pull request of ours left at the server.
    await until('no pull waiting', async () => (await consumerOf(path)).num_waiting === 0 || undefined);
    await published(subject, 3);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await fires(path)).toHaveLength(2);
    expect((await consumerOf(path)).num_pending).toBe(3);
    await setTriggerPaused(t.deps.db, path, 'orders', false, null);
    await until('5 fires', async () => (await fires(path)).length === 5 || undefined);
    await allAcked(path);
    expect(await executionsOf(path)).toHaveLength(5);
  });

  it('a message being fired when its trigger is paused starts nothing then: it goes back to the stream and fires once on resume', async () => {
    const path = `nats/pause_mid_${run}`;
    const subject = subjectOf('pause_mid');
    await api.register(playbook(path, subject));
    // The pause commits inside the message's fire, just before its fire is recorded.
    let paused = false;
    const pauseOnRecord = (q: Queryable): Queryable => ({
      async query<R extends pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]) {
        if (typeof text === 'object' && text.name === 'svc_record_fires' && !paused) {
          paused = true;
          await setTriggerPaused(t.deps.db, path, 'orders', true, null);
        }
        return q.query<R>(text, params);
      },
    });
    const db = new Proxy(t.deps.db, {
      get(target, prop) {
        if (prop === 'tx') return <T>(fn: (q: Queryable) => Promise<T>, timing?: TxTiming) => target.tx((q) => fn(pauseOnRecord(q)), timing);
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    subs = startNatsSubscriptions({ ...t.deps, db }, NO_PERIODIC_RELOAD);
    await published(subject, 1);
    await until('the pause', async () => paused || undefined);
    await until('no pull waiting', async () => (await consumerOf(path)).num_waiting === 0 || undefined);
    await new Promise((r) => setTimeout(r, 500));
    expect(await fires(path)).toEqual([]);
    expect(await executionsOf(path)).toEqual([]);
    await setTriggerPaused(t.deps.db, path, 'orders', false, null);
    await until('1 fire', async () => (await fires(path)).length === 1 || undefined);
    await allAcked(path);
    expect(await executionsOf(path)).toHaveLength(1);
  });

  it('carries on after the NATS server restarts', async (ctx) => {
    if (!server.own) ctx.skip();
    const path = `nats/restart_${run}`;
    const subject = subjectOf('restart');
    await api.register(playbook(path, subject));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    await published(subject, 3);
    await until('3 fires', async () => (await fires(path)).length === 3 || undefined);
    await server.own!.restart();
    await until('the test connection back', async () => (await jsm.streams.info(stream).catch(() => undefined)) !== undefined || undefined, 20_000);
    await published(subject, 3);
    await until('6 fires', async () => (await fires(path)).length === 6 || undefined, 30_000);
    await allAcked(path);
    expect(await executionsOf(path)).toHaveLength(6);
  });

  it('a version with another subject moves the consumer to it', async () => {
    const path = `nats/moved_${run}`;
    await api.register(playbook(path, subjectOf('before')));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    await until('the consumer', () => consumerOf(path).catch(() => undefined));
    await api.register(playbook(path, subjectOf('after'), 2));
    await until('the consumer on the new subject', async () => {
      const c = await consumerOf(path).catch(() => undefined);
      return (c?.config.filter_subject === subjectOf('after') && c.config.max_ack_pending === 2) || undefined;
    });
    await published(subjectOf('before'), 2);
    const [seq] = await published(subjectOf('after'), 1);
    await until('1 fire', async () => (await fires(path)).length === 1 || undefined);
    await allAcked(path);
    await new Promise((r) => setTimeout(r, 300));
    expect((await fires(path)).map((f) => f.fire_key)).toEqual([await keyOf(seq)]);
  });

  it('examples/nats_orders.yaml starts one execution per order', async () => {
    const example = await readFile(new URL('../../../examples/nats_orders.yaml', import.meta.url), 'utf8');
    const path = 'examples/nats_orders';
    // This run's stream and subject, not ORDERS: an external server is shared.
    await api.register(example.replace('stream: ORDERS', `stream: ${stream}`).replace('subject: orders.created', `subject: ${subjectOf('example.created')}`));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    const ack = await js.publish(subjectOf('example.created'), JSON.stringify({ id: 1001, total: 42.5, customer: 'acme' }));
    await until('1 fire', async () => (await fires(path)).length === 1 || undefined);
    const [row] = await fires(path);
    expect(row.outcome).toBe('started');
    const started = await startedEvent(Number(row.execution_id));
    expect(started.context.input.workload).toEqual({ order: { id: 1001, total: 42.5, customer: 'acme' }, subject: subjectOf('example.created'), seq: ack.seq });
  });

  it('a trigger without a usable credential or server is logged, tried again, and stops at once', async () => {
    const down = await http(t.url, 'POST', '/api/credentials', { name: 'nats_down', type: 'nats', data: { url: 'nats://127.0.0.1:1', token: PASSWORD } });
    expect(down.status).toBe(201);
    const unreachable = `nats/unreachable_${run}`;
    const missing = `nats/missing_${run}`;
    await api.register(playbook(unreachable, subjectOf('unreachable')).replace('auth: nats_auth', 'auth: nats_down'));
    await api.register(playbook(missing, subjectOf('missing')).replace('auth: nats_auth', 'auth: nats_nowhere'));
    const from = t.logs.length;
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    const logged = (text: string, path: string) => t.logs.slice(from).some((l) => l.includes(text) && l.includes(path));
    await until('the unreachable server logged', () => logged('NATS trigger cannot consume', unreachable));
    await until('the missing credential logged', () => logged("credential 'nats_nowhere' does not exist", missing));
    // The listing says why each is not consuming (it looked active with no fires), without the token.
    const problemOf = async (path: string) => ((await http(t.url, 'GET', '/api/triggers')).body.triggers as Json[]).find((x) => x.path === path)?.subscription_problem;
    // The log line comes first; the row is written just after it.
    expect(await until('the missing credential listed', async () => (await problemOf(missing)) ?? undefined)).toEqual({ message: "credential 'nats_nowhere' does not exist", since: expect.stringMatching(/Z$/) });
    expect((await until('the unreachable server listed', async () => (await problemOf(unreachable)) ?? undefined)).message).toEqual(expect.any(String));
    expect(JSON.stringify((await http(t.url, 'GET', '/api/triggers')).body)).not.toContain(PASSWORD);
    const t0 = Date.now();
    await subs.stop();
    subs = undefined;
    expect(Date.now() - t0).toBeLessThan(6_000);
    expect(t.logs.join('\n')).not.toContain(PASSWORD);
  });

  it('a trigger on a stream not made yet is listed as not consuming, and consumes once the stream is made', async () => {
    const later = `SVC_L_${run}`;
    const path = `nats/later_${run}`;
    await api.register(playbook(path, `svc_l_${run}.created`).replace(`stream: ${stream}`, `stream: ${later}`));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    const listed = async () => ((await http(t.url, 'GET', '/api/triggers')).body.triggers as Json[]).find((x) => x.path === path)!;
    const problem = await until('the missing stream listed', async () => (await listed()).subscription_problem ?? undefined);
    expect(problem.message).toMatch(/stream/i);
    expect((await listed()).state).toBe('active');
    try {
      await jsm.streams.add({ name: later, subjects: [`svc_l_${run}.>`] });
      await until('consuming', async () => (await listed()).subscription_problem === null, 60_000, 200);
      await js.publish(`svc_l_${run}.created`, JSON.stringify({ id: 1 }));
      await until('the message fired', async () => (await fires(path)).length === 1 || undefined);
    } finally {
      await jsm.streams.delete(later).catch(() => {});
    }
  });

  it('a message PostgreSQL cannot store (NUL in a JSON string or key, a lone surrogate, nesting past its stack) is recorded as refused and acked, not delivered again forever', async () => {
    const path = `nats/unstorable_${run}`;
    const subject = subjectOf('unstorable');
    await api.register(playbook(path, subject));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    // Nested 20,000 deep: past what PostgreSQL's jsonb parser can take (its stack).
    const poisoned = [JSON.stringify({ id: 'a\u0000b' }), JSON.stringify({ ['key\u0000']: 1 }), JSON.stringify({ id: '\ud800' }), `{"id": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`];
    const seqs: number[] = [];
    for (const text of poisoned) seqs.push((await js.publish(subject, text, { headers: tenant() })).seq);
    const good = await js.publish(subject, JSON.stringify({ id: 7 }), { headers: tenant() });
    await until('5 fires', async () => (await fires(path)).length === 5 || undefined);
    await allAcked(path);
    const rows = await fires(path);
    const byKey = new Map(rows.map((r) => [r.fire_key, r]));
    for (const seq of seqs) expect(byKey.get(await keyOf(seq))).toMatchObject({ outcome: 'refused', execution_id: null, error: expect.stringMatching(/^message\.json/) });
    expect(byKey.get(await keyOf(good.seq))).toMatchObject({ outcome: 'started' });
    expect(await executionsOf(path)).toHaveLength(1);
    expect((await consumerOf(path)).num_redelivered).toBe(0);
  });

  it('a JSON message with an integer beyond 2^53 is refused as a webhook body is (recorded, acked), not rounded; one within is taken exactly', async () => {
    const path = `nats/big_int_${run}`;
    const subject = subjectOf('big_int');
    await api.register(playbook(path, subject));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    const big = (await js.publish(subject, '{"id": 9007199254740993}', { headers: tenant() })).seq;
    const nested = (await js.publish(subject, '{"order": {"lines": [1, -12345678901234567890]}}', { headers: tenant() })).seq;
    // Not JSON at all: text (message.json null), whatever digits it holds.
    const text = (await js.publish(subject, 'order 12345678901234567890', { headers: tenant() })).seq;
    const exact = (await js.publish(subject, '{"id": 9007199254740991}', { headers: tenant() })).seq;
    await until('4 fires', async () => (await fires(path)).length === 4 || undefined);
    await allAcked(path);
    const byKey = new Map((await fires(path)).map((r) => [r.fire_key, r]));
    expect(byKey.get(await keyOf(big))).toMatchObject({ outcome: 'refused', execution_id: null, error: `message.json.id is an integer beyond what JavaScript holds exactly (±${Number.MAX_SAFE_INTEGER})` });
    expect(byKey.get(await keyOf(nested))).toMatchObject({ outcome: 'refused', error: expect.stringMatching(/^message\.json\.order\.lines\[1\] is an integer beyond/) });
    const started = [text, exact].map(async (seq) => byKey.get(await keyOf(seq))!);
    for (const r of await Promise.all(started)) expect(r.outcome).toBe('started');
    const orders = await Promise.all((await executionsOf(path)).map(async (id) => (await startedEvent(id)).context.input.workload.order));
    expect(orders).toEqual(expect.arrayContaining([null, { id: 9007199254740991 }]));
    expect((await consumerOf(path)).num_redelivered).toBe(0);
  });

  it('a version without the trigger stops it and deletes its consumer', async () => {
    const path = `nats/removed_${run}`;
    const subject = subjectOf('removed');
    await api.register(playbook(path, subject));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    await until('the consumer', () => consumerOf(path).catch(() => undefined));
    await api.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: removed, path: ${path} }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    await until('the consumer deleted', async () => (await consumerOf(path).then(() => false, () => true)) || undefined);
    await published(subject, 2);
    await new Promise((r) => setTimeout(r, 500));
    expect(await fires(path)).toHaveLength(0);
  });

  it('a trigger removed while paused and declared again delivers from its new registration on, not what was published while it did not exist', async () => {
    const path = `nats/readded_${run}`;
    const subject = subjectOf('readded');
    const without = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: readded, path: ${path} }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
    await api.register(playbook(path, subject));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    await published(subject, 1);
    await until('1 fire', async () => (await fires(path)).length === 1 || undefined);
    await allAcked(path);
    // Paused, then removed: no server consumes it, so none deletes its consumer (docs/nats-triggers.md).
    await setTriggerPaused(t.deps.db, path, 'orders', true, null);
    await until('no pull waiting', async () => (await consumerOf(path)).num_waiting === 0 || undefined);
    await api.register(without);
    await published(subject, 3);
    // Declared again: a new trigger, live from this registration on.
    await api.register(playbook(path, subject));
    await published(subject, 2);
    await until('2 more fires', async () => ((await fires(path)).length >= 3 ? true : undefined));
    await allAcked(path);
    await new Promise((r) => setTimeout(r, 500));
    expect(await fires(path)).toHaveLength(3);
    expect(await executionsOf(path)).toHaveLength(3);
  });
});

async function duplicateCount(): Promise<number> {
  const metric = await t.deps.metrics.triggerFires.get();
  return metric.values.filter((v) => v.labels.kind === 'nats' && v.labels.outcome === 'duplicate').reduce((n, v) => n + v.value, 0);
}
