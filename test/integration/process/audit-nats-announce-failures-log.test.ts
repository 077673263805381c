// Announcements NATS does not store (a stream at its limits with discard new, as an operator may
// set it; NATS away; the stream deleted) delay work, the reaper announcing the commands again
// (docs/scaling.md). Each was logged as a warning of its own: one line per command issued, 183
// lines for 200 starts here, and thousands for a short NATS outage under load. The first is
// logged, then a line a minute with the count, and the end once, when announcements are stored
// again; the work itself completes.
import { DiscardPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const NAMESPACE = 'announce_failures';
const STREAM = `SVC_COMMANDS_${NAMESPACE}`;
let bed: ServerProcesses;
let nats: Awaited<ReturnType<typeof jetStreamServer>>;
let nc: NatsConnection;
let jsm: JetStreamManager;
beforeAll(async () => {
  nats = await jetStreamServer();
  // A stream of this file's own (a namespace): the limits below touch no other test's.
  bed = await ServerProcesses.open({ SVC_NATS_URL: nats.url, SVC_NATS_NAMESPACE: NAMESPACE, SVC_LOG_LEVEL: 'info', SVC_COMMAND_REAPER_INTERVAL_SECONDS: '1', SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS: '1' });
  nc = await connect({ servers: nats.url });
  jsm = await jetstreamManager(nc);
});
afterAll(async () => {
  await bed?.close();
  await jsm?.streams.delete(STREAM).catch(() => {});
  await nc?.close();
  await nats?.close();
});

const PLAYBOOK = 'apiVersion: svc/v1\nmetadata: { name: f, path: bus/full }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n';
const notStoredLines = (output: string) => output.split('\n').filter((l) => l.includes('NATS announcement not stored'));

describe('announcements NATS does not store', () => {
  it('are logged once (then a line a minute), not once each, and the work completes', async () => {
    const a = await bed.server();
    const b = await bed.server();
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: PLAYBOOK })).status).toBe(201);
    // Full at 10, refusing what comes beyond: no claimer waits yet, so nothing is taken out.
    const { config } = await jsm.streams.info(STREAM);
    await jsm.streams.update(STREAM, { ...config, max_msgs: 10, discard: DiscardPolicy.New });
    const ids: number[] = [];
    for (let i = 0; i < 200; i++) ids.push((await http(b.base, 'POST', '/api/run/playbook', { path: 'bus/full' })).body.execution_id);
    await until('the announcements answered', async () => notStoredLines(b.proc.output()).length > 0, 10_000);
    await new Promise((r) => setTimeout(r, 1_000));
    const lines = notStoredLines(b.proc.output());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('maximum messages exceeded');

    // The limit lifted and a worker there: everything completes, and the end is said once.
    await jsm.streams.update(STREAM, { ...config });
    await bed.worker(a.base, 4);
    const done = async () => (await bed.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND status = 'completed'`, [ids])).rows[0].n;
    await until('all 200 completed', async () => (await done()) === 200, 60_000);
    // Stored again with no failure for 5 s: one line, counting what was not stored.
    await new Promise((r) => setTimeout(r, 5_500));
    expect((await http(b.base, 'POST', '/api/run/playbook', { path: 'bus/full' })).status).toBe(200);
    await until('the end logged', async () => b.proc.output().includes('NATS announcements stored again'), 10_000);
    const end = b.proc.output().split('\n').filter((l) => l.includes('NATS announcements stored again'));
    expect(end).toHaveLength(1);
    expect(JSON.parse(end[0]).not_stored).toBeGreaterThanOrEqual(150);
    expect(notStoredLines(b.proc.output())).toHaveLength(1);
  }, 120_000);
});
