// A trigger that starts consuming a stream it did not consume before (a webhook of the same name
// made a NATS trigger, a NATS trigger moved to another stream) is live from that registration on
// (docs/nats-triggers.md, "The consumer"): what the stream held before is not fired.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { natsDurableName } from '../../../src/triggers/nats-durable-name.ts';
import { startNatsSubscriptions } from '../../../src/triggers/nats-subscriptions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { until } from '../../helpers/until.ts';

let server: Awaited<ReturnType<typeof jetStreamServer>>;
let t: TestApp;
let api: ExecutionApi;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
let subs: ReturnType<typeof startNatsSubscriptions> | undefined;
const run = randomBytes(4).toString('hex');
const [streamA, streamB] = [`SVC_LA_${run}`, `SVC_LB_${run}`];

beforeAll(async () => {
  server = await jetStreamServer();
  t = await startTestApp();
  api = executionApi(t.url);
  nc = await connect({ servers: server.url });
  jsm = await jetstreamManager(nc);
  js = jetstream(nc);
  await jsm.streams.add({ name: streamA, subjects: [`svc_la_${run}.>`] });
  await jsm.streams.add({ name: streamB, subjects: [`svc_lb_${run}.>`] });
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'nats_auth', type: 'nats', data: { url: server.url } })).status).toBe(201);
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'hook_auth', type: 'custom', data: { secret: 'a hook secret' } })).status).toBe(201);
});
afterEach(async () => {
  await subs?.stop();
  subs = undefined;
});
afterAll(async () => {
  for (const s of [streamA, streamB]) await jsm?.streams.delete(s).catch(() => {});
  await nc?.close();
  await t?.close();
  await server?.close();
});

const playbook = (path: string, trigger: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: live_from, path: ${path} }
workload: { order: null }
triggers:
  - { name: orders, ${trigger}, payload: { order: "{{ message.json }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
const nats = (stream: string, subject: string) => `kind: nats, auth: nats_auth, stream: ${stream}, subject: "${subject}"`;
const fires = async (path: string) => (await t.deps.db.query<{ fire_key: string }>(`SELECT fire_key FROM core.trigger_fire WHERE path = $1 ORDER BY fired_at`, [path])).rows.map((r) => r.fire_key);
const publish = async (subject: string, ids: number[]) => {
  for (const id of ids) await js.publish(subject, JSON.stringify({ id }));
};
// The stream's clock and the database's differ by less than this.
const settle = () => new Promise((r) => setTimeout(r, 1100));

describe('a trigger that starts consuming a stream', () => {
  it('a webhook made a NATS trigger fires only what is published after that registration', async () => {
    const path = `nats/kind_${run}`;
    const subject = `svc_la_${run}.kind`;
    // The trigger `orders` has been declared (as a webhook) since before these messages.
    await api.register(playbook(path, 'kind: webhook, auth: hook_auth').replace(', payload: { order: "{{ message.json }}" }', ''));
    await settle();
    await publish(subject, [1, 2, 3]);
    await settle();
    subs = startNatsSubscriptions(t.deps);
    await api.register(playbook(path, nats(streamA, subject)));
    await until('the consumer', () => jsm.consumers.info(streamA, natsDurableName(path, 'orders')).catch(() => undefined));
    await publish(subject, [4]);
    await until('the new message fired', async () => ((await fires(path)).length >= 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    const seq = (await jsm.streams.info(streamA)).state.last_seq;
    expect((await fires(path)).map((k) => k.split('@')[0])).toEqual([`${streamA}:${seq}`]);
  });

  it('a NATS trigger moved to another stream fires only what that stream gets after the move', async () => {
    const path = `nats/moved_${run}`;
    await api.register(playbook(path, nats(streamA, `svc_la_${run}.moved`)));
    subs = startNatsSubscriptions(t.deps);
    await until('the consumer on A', () => jsm.consumers.info(streamA, natsDurableName(path, 'orders')).catch(() => undefined));
    await settle();
    // Published on B while the trigger consumed A.
    await publish(`svc_lb_${run}.moved`, [1, 2, 3]);
    await settle();
    await api.register(playbook(path, nats(streamB, `svc_lb_${run}.moved`)));
    await until('the consumer on B', () => jsm.consumers.info(streamB, natsDurableName(path, 'orders')).catch(() => undefined));
    await publish(`svc_lb_${run}.moved`, [4]);
    await until('the new message fired', async () => ((await fires(path)).length >= 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    const seq = (await jsm.streams.info(streamB)).state.last_seq;
    expect((await fires(path)).map((k) => k.split('@')[0])).toEqual([`${streamB}:${seq}`]);
  });
});
