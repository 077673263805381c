// The NATS JetStream bus (DESIGN.md "Scale-out"; src/bus/nats.ts) on real `svc server` and `svc
// worker` processes and a real nats-server: it delivers (no NOTIFY sent on the hot path), work
// resumes within 2 s of a nats-server restart, and an announcement lost on purpose is recovered
// by the reaper's announcement of PENDING commands; an accepted batch wakes another server.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BatchWake } from '../../../actors/batch-wake.ts';
import { createNatsBus, natsNames } from '../../../src/bus/nats.ts';
import { createLogger } from '../../../src/log.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { jetStreamServer, startNatsProxy } from '../../helpers/nats-server.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
let nats: Awaited<ReturnType<typeof jetStreamServer>>;
beforeAll(async () => {
  nats = await jetStreamServer();
  bed = await ServerProcesses.open({ SVC_NATS_URL: nats.url });
});
afterEach(async () => {
  await bed?.stopAll();
});
afterAll(async () => {
  await bed?.close();
  await nats?.close();
});

const playbook = (path: string) => `apiVersion: svc/v1
metadata: { name: n, path: ${path} }
workflow:
  - step: start
    tool: { name: a, kind: noop }
    next: two
  - step: two
    tool: { name: b, kind: noop }
`;

async function completed(ids: number[]): Promise<number> {
  const { rows } = await bed.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status = 'completed'`, [ids]);
  return rows[0].n;
}

describe('the NATS bus', () => {
  it('carries the work of two servers with no NOTIFY sent on the hot path', async () => {
    const a = await bed.server();
    const b = await bed.server();
    await bed.worker(a.base, 4);
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: playbook('nats/two') })).status).toBe(201);
    // Everything the database would send claimers, heard here.
    const listener = new pg.Client({ connectionString: bed.database.url });
    await listener.connect();
    let notified = 0;
    listener.on('notification', (n) => {
      if (n.channel === 'svc_commands') notified++;
    });
    await listener.query('LISTEN svc_commands');
    try {
      const ids: number[] = [];
      // Started on the server without the worker: its announcements wake the other's claimers.
      for (let i = 0; i < 60; i++) ids.push((await http(b.base, 'POST', '/api/run/playbook', { path: 'nats/two' })).body.execution_id);
      await until('all completed', async () => (await completed(ids)) === 60, 30_000);
      expect(notified).toBe(0);
    } finally {
      await listener.end();
    }
  }, 90_000);

  it('work resumes within 2 s of a nats-server restart', async (ctx) => {
    if (!nats.own) return ctx.skip(); // an external server (SVC_TEST_NATS_URL) is never restarted
    // Started on b, claimed through a: a worker's claim parked on the server that writes the start
    // is handed its command with the commit, with no bus at all, so one server would pass with
    // NATS deaf. Only a's bus (pull consumer and reconnect) can end its claimers' 5 s waits early.
    const a = await bed.server();
    const b = await bed.server();
    await bed.worker(a.base, 2);
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: playbook('nats/restart') })).status).toBe(201);
    const before = (await http(b.base, 'POST', '/api/run/playbook', { path: 'nats/restart' })).body.execution_id;
    await until('the first completed', async () => (await completed([before])) === 1, 20_000);
    await nats.own.restart();
    const restarted = performance.now();
    // Both back first: a's reconnect wakes its claimers to look once, so a start written before it
    // would be found without a message. Started after it, each is found only by its announcement.
    const busOk = async (base: string) => (await http(base, 'GET', '/api/health')).body.bus === 'ok';
    await until('both servers reconnected', async () => (await busOk(a.base)) && (await busOk(b.base)), 2_000, 20);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await http(b.base, 'POST', '/api/run/playbook', { path: 'nats/restart' })).body.execution_id);
    await until('those started after the restart completed', async () => (await completed(ids)) === 5, 20_000, 20);
    expect(performance.now() - restarted).toBeLessThan(2_000);
  }, 60_000);

  it('an announcement lost on purpose is recovered by the reaper', async () => {
    // Server b reaches NATS through a proxy the test cuts: what it announces is lost.
    const proxy = await startNatsProxy(nats.url);
    try {
      const reaper = { SVC_COMMAND_REAPER_INTERVAL_SECONDS: '1', SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS: '1' };
      const a = await bed.server(reaper);
      const b = await bed.server({ ...reaper, SVC_NATS_URL: proxy.url, SVC_COMMAND_REAPER_ENABLED: 'false' });
      expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: l, path: nats/lost }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n' })).status).toBe(201);
      // A claimer waiting on a for 30 s: only an announcement ends its wait early.
      await http(a.base, 'POST', '/api/worker/pool/register', { name: 'w-lost', capacity: 1 }, asWorker);
      const t0 = performance.now();
      const claim = http(a.base, 'POST', '/api/worker/claim', { worker_id: 'w-lost', max: 1, wait_ms: 30_000 }, asWorker);
      await new Promise((r) => setTimeout(r, 300));
      proxy.hold();
      const id = (await http(b.base, 'POST', '/api/run/playbook', { path: 'nats/lost' })).body.execution_id;
      const got = await claim;
      const waited = performance.now() - t0;
      expect(got.body.commands.map((c: { execution_id: number }) => c.execution_id)).toEqual([id]);
      // Not the claim's own 30 s timeout: the reaper on a announced the PENDING command again (each second).
      expect(waited).toBeLessThan(10_000);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('a batch accepted on one server wakes the processors of another; a stranded announcement reaches every server', async () => {
    const log = createLogger('silent');
    const wakes = [new BatchWake(), new BatchWake()];
    const buses = await Promise.all(wakes.map((batchWake) => createNatsBus(nats.url, { log, metrics: createMetrics(), batchWake, names: natsNames() })));
    try {
      const seen = wakes[1].generation;
      const woken = wakes[1].wait(seen, 5_000, new AbortController().signal);
      const t0 = performance.now();
      wakes[0].wake();
      await woken;
      expect(wakes[1].generation).toBe(seen + 1);
      expect(performance.now() - t0).toBeLessThan(1_000);
      // The reaper's hint: every server's claims then look at stranded commands too.
      expect(buses[1].strandedHeard()).toBe(false);
      await buses[0].publish(1, true);
      await until('the other server heard', () => buses[1].strandedHeard(), 5_000);
    } finally {
      await Promise.all(buses.map((b) => b.close()));
    }
  }, 30_000);
});
