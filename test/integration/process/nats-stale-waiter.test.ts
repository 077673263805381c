// The NATS bus hands each announcement to one server (a work-queue stream, one consumer): a
// server must take them only while a claimer of its own waits, or the announcement is lost for
// the server whose worker does wait, which then finds the command only when its claim's wait
// (5 s) ends. A claim answered with commands (at once, or handed by a unit's write) used to stay
// counted as waiting until its wait_ms passed, so its server went on taking announcements.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
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

const status = async (id: number): Promise<string> => (await bed.db.query<{ status: string }>(`SELECT status FROM core.execution WHERE execution_id = $1`, [id])).rows[0]?.status;

describe('the NATS bus with a claim answered on one server', () => {
  it("that server no longer takes the announcements the other server's waiting worker needs", async () => {
    const a = await bed.server();
    const b = await bed.server();
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: one, path: stale/one }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n' })).status).toBe(201);
    // The only worker process, on B, waits there.
    await bed.worker(b.base, 1);
    // A claim on A with a long wait, answered by the command of a start on A (handed to it by the start's write).
    await http(a.base, 'POST', '/api/worker/pool/register', { name: 'w-a', capacity: 1 }, asWorker);
    const claim = http(a.base, 'POST', '/api/worker/claim', { worker_id: 'w-a', max: 1, wait_ms: 30_000 }, asWorker);
    await new Promise((r) => setTimeout(r, 300));
    const held = (await http(a.base, 'POST', '/api/run/playbook', { path: 'stale/one' })).body.execution_id as number;
    expect((await claim).body.commands.map((c: { execution_id: number }) => c.execution_id)).toEqual([held]);
    // No claimer waits on A now: what A announces is B's worker's to take, at once.
    const slow: number[] = [];
    for (let i = 0; i < 6; i++) {
      const id = (await http(a.base, 'POST', '/api/run/playbook', { path: 'stale/one' })).body.execution_id as number;
      const t0 = performance.now();
      await until(`execution ${id} completed`, async () => (await status(id)) === 'completed', 20_000, 20);
      const ms = performance.now() - t0;
      if (ms > 2_000) slow.push(Math.round(ms));
    }
    expect(slow).toEqual([]);
  }, 60_000);
});
