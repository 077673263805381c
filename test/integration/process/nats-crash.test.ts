// 200 NATS messages published while `svc server` processes are SIGKILLed and started again:
// exactly 200 executions, none twice. A killed server's messages in flight were not acked (an ack
// follows the commit), so JetStream delivers them again after the ack wait: none is lost. Servers
// cut off from NATS and then killed committed fires whose acks never arrived: delivered again,
// their fire keys start nothing twice.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { natsDurableName } from '../../../src/triggers/nats-durable-name.ts';
import { NATS_ACK_WAIT_MS } from '../../../src/triggers/nats-consumer.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { jetStreamServer, startNatsProxy } from '../../helpers/nats-server.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const MESSAGES = 200;
const run = randomBytes(4).toString('hex');
const stream = `SVC_CRASH_${run}`;
const subject = `svc_crash_${run}.orders`;
const path = `nats/crash_${run}`;

let bed: ServerProcesses;
let nats: Awaited<ReturnType<typeof jetStreamServer>>;
let nc: NatsConnection;
let jsm: JetStreamManager;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
  nats = await jetStreamServer();
  nc = await connect({ servers: nats.url });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [subject] });
});
afterEach(async () => {
  await bed.stopAll();
});
afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => {});
  await nc?.close();
  await nats?.close();
  await bed?.close();
});

const count = async (sql: string) => Number((await bed.db.query<{ n: string }>(sql, [path])).rows[0].n);
const fireCount = () => count(`SELECT count(*) AS n FROM core.trigger_fire WHERE path = $1`);

const metricsDuplicates = async (base: string) => {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('svc_trigger_fires_total{') && l.includes('kind="nats"') && l.includes('outcome="duplicate"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
};

describe('servers killed while NATS messages arrive', () => {
  it(`start exactly ${MESSAGES} executions for ${MESSAGES} messages, none twice`, { timeout: 60_000 + 3 * NATS_ACK_WAIT_MS }, async () => {
    // The servers reach NATS through a proxy that can cut them off from it.
    const cut = await startNatsProxy(nats.url);
    try {
      let a = await bed.server();
      let b = await bed.server();
      const stored = await http(a.base, 'POST', '/api/credentials', { name: 'nats_auth', type: 'nats', data: { url: cut.url } });
      expect(stored.status).toBe(201);
      await executionApi(a.base).register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: crash, path: ${path} }
workload: { n: 0 }
triggers:
  - name: orders
    kind: nats
    auth: nats_auth
    stream: ${stream}
    subject: ${subject}
    max_in_flight: 16
    payload: { n: "{{ message.json.n }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
      const durable = natsDurableName(path, 'orders');
      await until('the consumer', () => jsm.consumers.info(stream, durable).catch(() => undefined), 20_000);
      const js = jetstream(nc);
      const seqs: number[] = [];
      const publish = async (from: number, to: number) => {
        for (let n = from; n <= to; n++) seqs.push((await js.publish(subject, JSON.stringify({ n }))).seq);
      };

      // 1. A backlog, and a server killed while it fires its share: what it had not committed is
      //    delivered again (it was not acked), the rest is published while it is down and starting.
      await publish(1, 80);
      await until('20 fired', async () => (await fireCount()) >= 20 || undefined, 30_000, 5);
      a.proc.kill('SIGKILL');
      await a.proc.exited;
      const firedAtKill = await fireCount();
      const unackedAtKill = (await jsm.consumers.info(stream, durable)).num_ack_pending;
      await publish(81, 100);
      [a] = await Promise.all([bed.server(), publish(101, 120)]);
      expect(firedAtKill).toBeLessThan(120);
      // Its messages come back after the ack wait (until then they fill max_in_flight).
      await until('120 fired', async () => (await fireCount()) >= 120 || undefined, 30_000 + 2 * NATS_ACK_WAIT_MS, 100);

      // 2. Both servers cut off from NATS mid-backlog, then killed: the fires they committed
      //    meanwhile were never acked, so JetStream delivers them again; their keys start nothing.
      await publish(121, 200);
      await until('140 fired', async () => (await fireCount()) >= 140 || undefined, 30_000, 5);
      cut.hold();
      const firedAtCut = await fireCount();
      await new Promise((r) => setTimeout(r, 1_000));
      a.proc.kill('SIGKILL');
      b.proc.kill('SIGKILL');
      await Promise.all([a.proc.exited, b.proc.exited]);
      const committedUnacked = (await fireCount()) - firedAtCut;
      cut.release();
      a = await bed.server();
      b = await bed.server();
      expect(committedUnacked).toBeGreaterThan(0);

      await until(`${MESSAGES} fires`, async () => (await fireCount()) >= MESSAGES || undefined, 30_000 + 2 * NATS_ACK_WAIT_MS, 100);
      await until('every message acked', async () => {
        const c = await jsm.consumers.info(stream, durable);
        return (c.num_ack_pending === 0 && c.num_pending === 0) || undefined;
      }, 30_000 + 2 * NATS_ACK_WAIT_MS, 100);
      // Nothing more comes of the redeliveries.
      await new Promise((r) => setTimeout(r, 500));
      const duplicates = (await metricsDuplicates(a.base)) + (await metricsDuplicates(b.base));
      expect(duplicates).toBeGreaterThanOrEqual(committedUnacked);
      expect(await fireCount()).toBe(MESSAGES);
      expect(await count(`SELECT count(*) AS n FROM core.trigger_fire WHERE path = $1 AND outcome = 'started'`)).toBe(MESSAGES);
      expect(await count(`SELECT count(*) AS n FROM core.execution WHERE path = $1`)).toBe(MESSAGES);
      expect(await count(`SELECT count(DISTINCT execution_id) AS n FROM core.trigger_fire WHERE path = $1`)).toBe(MESSAGES);
      // Per fire key one execution.started, and per message one fire.
      const started = await bed.db.query<{ key: string; n: string }>(
        `SELECT e.context->'trigger'->>'fire_key' AS key, count(*) AS n FROM core.event e JOIN core.execution x USING (execution_id)
          WHERE x.path = $1 AND e.event_type = 'execution.started' GROUP BY 1`,
        [path],
      );
      expect(started.rows).toHaveLength(MESSAGES);
      expect(started.rows.every((r) => Number(r.n) === 1)).toBe(true);
      const created = (await jsm.streams.info(stream)).created;
      expect(started.rows.map((r) => r.key).sort()).toEqual(seqs.map((s) => `${stream}:${s}@${created}`).sort());
      const workloads = await bed.db.query<{ n: number }>(
        `SELECT (e.context->'input'->'workload'->>'n')::int AS n FROM core.event e JOIN core.execution x USING (execution_id)
          WHERE x.path = $1 AND e.event_type = 'execution.started' ORDER BY 1`,
        [path],
      );
      expect(workloads.rows.map((r) => r.n)).toEqual(Array.from({ length: MESSAGES }, (_, i) => i + 1));
      console.log(
        `nats-crash: ${firedAtKill} fired and ${unackedAtKill} unacked at the first kill; ${committedUnacked} committed but never acked at the second, ${duplicates} duplicate deliveries; ${MESSAGES} executions`,
      );
    } finally {
      await cut.close();
    }
  });
});
