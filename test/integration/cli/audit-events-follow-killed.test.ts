// `svc events send --follow` through a server killed while it streams the batch's status: the
// follower opens the stream again on the server that comes back and prints the end, as it does
// after a server that closed the stream gracefully.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { batchApi, commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
let dir: string;
beforeAll(async () => {
  // A short processing timeout: the batch the killed server held is taken again after its lease (3 + 5 s).
  bed = await ServerProcesses.open({ SVC_BATCH_PROCESSING_TIMEOUT_SECONDS: '3', SVC_BATCH_STATUS_STREAM_POLL_SECONDS: '0.1' });
  dir = await mkdtemp(join(tmpdir(), 'svc-events-killed-'));
}, 60_000);
afterAll(async () => {
  await bed?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('follows on through a server killed mid-stream and prints the end', async () => {
  const port = await freePort();
  const first = await bed.server({}, port);
  const ex = executionApi(first.base);
  await ex.register(noopPlaybook('cli/killed/two', 2));
  const id = await ex.run('cli/killed/two');
  const pending = await bed.db.query('SELECT command_id FROM core.command WHERE execution_id = $1', [id]);
  const cmd = await batchApi(first.base).claim(Number(pending.rows[0].command_id), 'w1');
  const file = join(dir, 'batch.json');
  await writeFile(file, JSON.stringify({ execution_id: id, worker_id: 'w1', events: commandReport(cmd) }));

  // The batch's routing waits for a lock the test holds, so it is processing while the server dies.
  const hold = new pg.Client({ connectionString: bed.database.url });
  await hold.connect();
  await hold.query('BEGIN; LOCK TABLE core.command IN ACCESS EXCLUSIVE MODE');
  const follower = spawnSvc(['events', 'send', file, '--follow'], { SVC_SERVER_URL: first.base });
  try {
    await until('the batch shown processing', () => follower.output().includes('processing'), 10_000);
    first.proc.kill('SIGKILL');
    await first.proc.exited;
    const second = await bed.server({}, port);
    await hold.query('COMMIT');
    // Before: 'svc events: aborted', exit 1, as soon as the server died.
    expect(await follower.exited).toBe(0);
    expect(follower.output()).not.toContain('aborted');
    expect(follower.output()).toMatch(/batch \S+ completed after/);
    // The second server took the batch after the lease and routed it, once.
    const events = await executionApi(second.base).events(id);
    expect(events.filter((e) => e.event_type === 'command.completed')).toHaveLength(1);
    expect(events.filter((e) => e.event_type === 'batch.completed')).toHaveLength(1);
  } finally {
    await hold.end().catch(() => {});
    follower.kill('SIGTERM');
  }
}, 90_000);
