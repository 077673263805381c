// A NATS trigger on a work-queue stream (retention workqueue: each message is taken once, then
// removed), on a real nats-server: NATS takes no consumer there that delivers from a start time,
// so such a trigger never consumed ('consumer must be deliver all on workqueue stream' in its
// listing, every message left in the queue). It consumes: each message starts one execution and
// is acked, so the queue empties; messages waiting in the queue when the trigger is declared are
// its work and fire too.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, RetentionPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsDurableName } from '../../../src/triggers/nats-durable-name.ts';
import { startNatsSubscriptions } from '../../../src/triggers/nats-subscriptions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { until } from '../../helpers/until.ts';

let server: Awaited<ReturnType<typeof jetStreamServer>>;
let t: TestApp;
let nc: NatsConnection;
let jsm: JetStreamManager;
const run = randomBytes(4).toString('hex');
const stream = `SVC_WQ_${run}`;
const subject = `svc_wq_${run}.jobs`;
const path = `nats/workqueue_${run}`;

beforeAll(async () => {
  server = await jetStreamServer();
  t = await startTestApp();
  nc = await connect({ servers: server.url });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`svc_wq_${run}.>`], retention: RetentionPolicy.Workqueue });
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'nats_wq', type: 'nats', data: { url: server.url } })).status).toBe(201);
});
afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => {});
  await nc?.close();
  await t?.close();
  await server?.close();
});

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: workqueue, path: ${path} }
workload: { job: null }
triggers:
  - { name: jobs, kind: nats, auth: nats_wq, stream: ${stream}, subject: ${subject}, max_in_flight: 2, payload: { job: "{{ message.json }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

const jobsOf = async () =>
  (await t.deps.db.query<{ job: { id: number } }>(
    `SELECT e.context->'input'->'workload'->'job' AS job FROM core.trigger_fire f JOIN core.event e ON e.execution_id = f.execution_id AND e.event_type = 'execution.started'
      WHERE f.path = $1 AND f.outcome = 'started' ORDER BY (e.context->'input'->'workload'->'job'->>'id')::int`,
    [path],
  )).rows.map((r) => r.job.id);

describe('a NATS trigger on a work-queue stream', () => {
  it('consumes: one execution per message, the queue emptied, messages waiting at its declaration included', async () => {
    const js = jetstream(nc);
    // Waiting in the queue before the trigger exists: work nobody has taken yet.
    await js.publish(subject, JSON.stringify({ id: 1 }));
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK })).status).toBe(201);
    const subs = startNatsSubscriptions(t.deps, { reloadIntervalMs: 3_600_000 });
    try {
      for (let id = 2; id <= 4; id++) await js.publish(subject, JSON.stringify({ id }));
      await until('4 executions', async () => {
        const listed = await http(t.url, 'GET', '/api/triggers?kind=nats');
        const problem = listed.body.triggers.find((x: { path: string }) => x.path === path)?.subscription_problem;
        // Fails fast with NATS's refusal rather than waiting out the until.
        expect(problem).toBeNull();
        return (await jobsOf()).length === 4 || undefined;
      }, 20_000);
      expect(await jobsOf()).toEqual([1, 2, 3, 4]);
      await until('the queue emptied', async () => (await jsm.streams.info(stream)).state.messages === 0 || undefined);
      const consumer = await jsm.consumers.info(stream, natsDurableName(path, 'jobs'));
      expect(consumer.config).toMatchObject({ filter_subject: subject, max_ack_pending: 2, ack_policy: 'explicit' });
    } finally {
      await subs.stop();
    }
  });
});
