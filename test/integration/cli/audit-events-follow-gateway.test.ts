// `svc events send --follow` through the gateway while the server behind it is killed and started
// again: the gateway answers the follower's reconnections 502 bad_gateway meanwhile (and a server
// whose database is away answers 503), which the follower took for the batch refused and exited 1,
// though the batch was accepted and the server that came back processed it. It rides those out as
// it does a server it cannot reach, and prints the end.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { asWorker, bearer, createApiToken } from '../../helpers/auth.ts';
import { commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
let dir: string;
let gw: TestGateway | undefined;
beforeAll(async () => {
  // A short processing timeout: the batch the killed server held is taken again after its lease (3 + 5 s).
  bed = await ServerProcesses.open({
    SVC_AUTH: 'gateway',
    SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET,
    SVC_BATCH_PROCESSING_TIMEOUT_SECONDS: '3',
    SVC_BATCH_STATUS_STREAM_POLL_SECONDS: '0.1',
  });
  dir = await mkdtemp(join(tmpdir(), 'svc-events-gateway-'));
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await bed?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('follows on through the gateway while the server behind it is killed and started again', async () => {
  const port = await freePort();
  const first = await bed.server({}, port);
  const token = await createApiToken(bed.db, 'events-operator', 'operator');
  gw = await startTestGateway({ SVC_SERVER_URL: first.base, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
  const as = bearer(token);
  expect((await http(gw.url, 'POST', '/api/catalog/playbook', { content: noopPlaybook('cli/gateway/two', 2) }, as)).status).toBe(201);
  const id: number = (await http(gw.url, 'POST', '/api/run/playbook', { path: 'cli/gateway/two' }, as)).body.execution_id;
  const pending = await bed.db.query('SELECT command_id FROM core.command WHERE execution_id = $1', [id]);
  const cmd = (await http(first.base, 'POST', `/api/commands/${pending.rows[0].command_id}/claim`, { worker_id: 'w1' }, asWorker)).body;
  const file = join(dir, 'batch.json');
  await writeFile(file, JSON.stringify({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) }));

  // The batch's routing waits for a lock the test holds, so it is processing while the server dies.
  const hold = new pg.Client({ connectionString: bed.database.url });
  await hold.connect();
  await hold.query('BEGIN; LOCK TABLE core.command IN ACCESS EXCLUSIVE MODE');
  const follower = spawnSvc(['events', 'send', file, '--follow'], { SVC_SERVER_URL: gw.url, SVC_API_TOKEN: token });
  try {
    await until('the batch shown processing', () => follower.output().includes('processing'), 10_000);
    first.proc.kill('SIGKILL');
    await first.proc.exited;
    // The follower's reconnections meet the gateway's 502 for a while.
    await new Promise((r) => setTimeout(r, 2_000));
    await bed.server({}, port);
    await hold.query('COMMIT');
    // Before: 'svc events: GET /api/events/batch/…/stream: 502 …', exit 1, while the server was away.
    expect(await follower.exited, follower.output()).toBe(0);
    expect(follower.output()).toMatch(/batch \S+ completed after/);
    const events = (await http(gw.url, 'GET', `/api/events/${id}`, undefined, as)).body.events as { event_type: string }[];
    expect(events.filter((e) => e.event_type === 'command.completed')).toHaveLength(1);
    expect(events.filter((e) => e.event_type === 'batch.completed')).toHaveLength(1);
  } finally {
    await hold.end().catch(() => {});
    follower.kill('SIGTERM');
  }
}, 90_000);
