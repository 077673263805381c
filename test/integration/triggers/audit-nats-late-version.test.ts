// A NATS subscription renders a message's payload with the trigger as it read it. A new version
// registered before the subscription was made again (its notification not yet heard) started that
// version's workflow with the old version's payload. A fire now finds the trigger still of the
// version it rendered against, or writes nothing: the message goes back to the stream and the
// subscription of the new version fires it, once. A version that leaves the trigger as it was
// only moves the subscription on (follow).
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import * as v from 'valibot';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { natsTriggerRows } from '../../../src/db/trigger-subscription.repo.ts';
import { natsLogin } from '../../../src/triggers/nats-login.ts';
import { startNatsSubscription, type NatsSubscription } from '../../../src/triggers/nats-subscription.ts';
import { startNatsSubscriptions } from '../../../src/triggers/nats-subscriptions.ts';
import { NatsTriggerSchema } from '../../../src/triggers/trigger.schema.ts';
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
const subs: { stop(): Promise<void> }[] = [];
const run = randomBytes(4).toString('hex');
const stream = `SVC_LV_${run}`;

beforeAll(async () => {
  server = await jetStreamServer();
  t = await startTestApp();
  api = executionApi(t.url);
  nc = await connect({ servers: server.url });
  jsm = await jetstreamManager(nc);
  js = jetstream(nc);
  await jsm.streams.add({ name: stream, subjects: [`svc_lv_${run}.>`] });
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'nats_auth', type: 'nats', data: { url: server.url } })).status).toBe(201);
});
afterEach(async () => {
  for (const s of subs.splice(0)) await s.stop();
});
afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => {});
  await nc?.close();
  await t?.close();
  await server?.close();
});

const playbook = (path: string, subject: string, tag: string, step = 'start') => `apiVersion: svc/v1
kind: Playbook
metadata: { name: late_version, path: ${path} }
workload: { tag: null, id: null }
triggers:
  - { name: orders, kind: nats, auth: nats_auth, stream: ${stream}, subject: "${subject}", payload: { tag: ${tag}, id: "{{ message.json.id }}" } }
workflow:
  - step: ${step}
    tool: { name: t, kind: noop }
`;

/** The executions the trigger started: the payload each got, and the version it runs. */
async function started(path: string): Promise<{ tag: string; id: string; catalog_id: number }[]> {
  const { rows } = await t.deps.db.query<{ tag: string; id: string; catalog_id: number }>(
    `SELECT e.context->'input'->'workload'->>'tag' AS tag, e.context->'input'->'workload'->>'id' AS id, x.catalog_id::float8 AS catalog_id
       FROM core.execution x JOIN core.event e ON e.execution_id = x.execution_id AND e.event_type = 'execution.started'
      WHERE x.path = $1 ORDER BY x.execution_id`,
    [path],
  );
  return rows;
}

/** The trigger's subscription as a server made it from the row it read now. */
async function subscribe(path: string, onChanged?: () => void): Promise<NatsSubscription> {
  const row = (await natsTriggerRows(t.deps.db)).find((r) => r.path === path)!;
  const login = natsLogin(t.deps.keyring, { name: 'nats_auth', type: row.credential_type, sealed: row.credential_sealed });
  if (!('login' in login)) throw new Error(login.problem);
  const sub = startNatsSubscription(t.deps, { path, name: 'orders', spec: v.parse(NatsTriggerSchema, row.spec), login: login.login, startTime: row.created_at, catalogId: row.catalog_id, onChanged });
  subs.push(sub);
  return sub;
}

it('a message fired by a subscription of the version before: nothing started; the new version fires it with its own payload, once', async () => {
  const path = `nats/late_${run}`;
  const subject = `svc_lv_${run}.late`;
  await api.register(playbook(path, subject, 'one'));
  let changed = 0;
  const old = await subscribe(path, () => changed++);
  await js.publish(subject, JSON.stringify({ id: 1 }));
  await until('the first message fired', async () => ((await started(path)).length === 1 ? true : undefined));

  const second = await api.register(playbook(path, subject, 'two'));
  await js.publish(subject, JSON.stringify({ id: 2 }));
  // Before: started at once, version two's workflow with payload `one`.
  await until('the old subscription told its trigger changed', () => (changed > 0 ? true : undefined));
  expect((await started(path)).map((r) => r.tag)).toEqual(['one']);

  await old.stop();
  await subscribe(path);
  await until('the message fired by the new subscription', async () => ((await started(path)).length === 2 ? true : undefined), 15_000);
  const rows = await started(path);
  expect(rows[1]).toEqual({ tag: 'two', id: '2', catalog_id: Number(second.catalog_id) });
  const fires = await t.deps.db.query('SELECT fire_key FROM core.trigger_fire WHERE path = $1', [path]);
  expect(fires.rowCount).toBe(2);
});

it('a new version that leaves the trigger as it was: the server keeps its subscription and fires with the new version', async () => {
  const path = `nats/same_${run}`;
  const subject = `svc_lv_${run}.same`;
  await api.register(playbook(path, subject, 'one'));
  const servers = startNatsSubscriptions(t.deps);
  subs.push(servers);
  await servers.reload();
  await js.publish(subject, JSON.stringify({ id: 1 }));
  await until('the first message fired', async () => ((await started(path)).length === 1 ? true : undefined), 15_000);

  const second = await api.register(playbook(path, subject, 'one', 'begin'));
  await servers.reload();
  await js.publish(subject, JSON.stringify({ id: 2 }));
  await until('the second message fired', async () => ((await started(path)).length === 2 ? true : undefined), 15_000);
  const rows = await started(path);
  expect(rows.map((r) => [r.tag, r.id])).toEqual([
    ['one', '1'],
    ['one', '2'],
  ]);
  expect(rows[1].catalog_id).toBe(Number(second.catalog_id));
});
