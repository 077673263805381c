// A NATS message is JSON only when its bytes are UTF-8 (RFC 8259), as a webhook body is (400
// otherwise): JSON whose bytes are not UTF-8 makes the fire refused (recorded, acked), naming the
// byte, where its text was decoded leniently and each bad sequence reached the workload as U+FFFD
// (docs/nats-triggers.md, Delivery). A message that is not JSON stays text, whatever its bytes.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsDurableName } from '../../../src/triggers/nats-durable-name.ts';
import { startNatsSubscriptions } from '../../../src/triggers/nats-subscriptions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { until } from '../../helpers/until.ts';

let server: Awaited<ReturnType<typeof jetStreamServer>>;
let t: TestApp;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
const run = randomBytes(4).toString('hex');
const stream = `SVC_U8_${run}`;
const subject = `svc_u8_${run}.orders`;
const path = `nats/utf8_${run}`;

beforeAll(async () => {
  server = await jetStreamServer();
  t = await startTestApp();
  nc = await connect({ servers: server.url });
  jsm = await jetstreamManager(nc);
  js = jetstream(nc);
  await jsm.streams.add({ name: stream, subjects: [`svc_u8_${run}.>`] });
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'nats_auth', type: 'nats', data: { url: server.url } })).status).toBe(201);
});
afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => {});
  await nc?.close();
  await t?.close();
  await server?.close();
});

type FireRow = { fire_key: string; outcome: string; execution_id: string | null; error: string | null };
const fires = async () => (await t.deps.db.query<FireRow>(`SELECT fire_key, outcome, execution_id, error FROM core.trigger_fire WHERE path = $1`, [path])).rows;
const keyOf = async (seq: number) => `${stream}:${seq}@${(await jsm.streams.info(stream)).created}`;

describe('a NATS message whose bytes are not UTF-8', () => {
  it('is refused when it is JSON (recorded, acked, nothing started); taken as text when it is not', async () => {
    await executionApi(t.url).register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: utf8_${run}, path: ${path} }
workload: { order: null, text: null }
triggers:
  - { name: orders, kind: nats, auth: nats_auth, stream: ${stream}, subject: ${subject}, payload: { order: "{{ message.json }}", text: "{{ message.text }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
    const subs = startNatsSubscriptions(t.deps);
    try {
      // {"name": "caf<0xE9>"}: café in Latin-1.
      const latin1 = (await js.publish(subject, Buffer.concat([Buffer.from('{"name": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]))).seq;
      const binary = (await js.publish(subject, Buffer.from([0x01, 0xff, 0x02]))).seq;
      const good = (await js.publish(subject, Buffer.from('{"name": "café"}'))).seq;
      await until('3 fires', async () => (await fires()).length === 3 || undefined);
      await until('all acked', async () => {
        const c = await jsm.consumers.info(stream, natsDurableName(path, 'orders'));
        return (c.num_ack_pending === 0 && c.num_pending === 0) || undefined;
      });
      const byKey = new Map((await fires()).map((r) => [r.fire_key, r]));
      expect(byKey.get(await keyOf(latin1))).toMatchObject({ outcome: 'refused', execution_id: null, error: expect.stringMatching(/^message\.json: the message.s bytes are not UTF-8 \(at byte 13\)/) });
      expect(byKey.get(await keyOf(binary))).toMatchObject({ outcome: 'started' });
      const goodFire = byKey.get(await keyOf(good))!;
      expect(goodFire.outcome).toBe('started');
      const { rows } = await t.deps.db.query<{ context: { input: { workload: { order: unknown } } } }>(`SELECT context FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`, [goodFire.execution_id]);
      expect(rows[0].context.input.workload.order).toEqual({ name: 'café' });
    } finally {
      await subs.stop();
    }
  });
});
