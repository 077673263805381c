// The NATS bus hands each announcement to one server (a work-queue stream, one consumer). A unit
// that issues several commands must wake as many claimers as they need, on whichever servers
// they wait: announced as one message, its commands woke the claimers of one server, which took
// what its workers had room for, and the others waited for another worker's claim wait (5 s).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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

const fanOut = `apiVersion: svc/v1
metadata: { name: fan, path: fan/two }
workflow:
  - step: start
    loop: { in: [1, 2], iterator: i, mode: parallel }
    tool: { name: nap, kind: shell, command: 'sleep 3' }
`;

// Not woken, the second command waits for the other worker to end its 3 s nap (or for a claim
// wait, 5 s); woken, it starts as soon as its worker hears, which a loaded CI machine took over
// a second to do once (the nap was 1 s then, and the other worker's next claim took it).
const TOGETHER_MS = 2_500;
// Three servers and two workers start within each test: a loaded machine (CI beside other work) took over a minute.

describe('the NATS bus with a unit issuing two commands', () => {
  it('wakes a waiting worker on each of two servers: both run at once', async () => {
    const a = await bed.server();
    const b = await bed.server();
    const c = await bed.server();
    expect((await http(c.base, 'POST', '/api/catalog/playbook', { content: fanOut })).status).toBe(201);
    // One slot on each of A and B; the starts go to C, where no claimer waits.
    await bed.worker(a.base, 1);
    await bed.worker(b.base, 1);
    await new Promise((r) => setTimeout(r, 500));
    const apart: number[] = [];
    for (let i = 0; i < 4; i++) {
      const id = (await http(c.base, 'POST', '/api/run/playbook', { path: 'fan/two' })).body.execution_id as number;
      await until(`execution ${id} completed`, async () => (await bed.db.query(`SELECT 1 FROM core.execution WHERE execution_id = $1 AND status = 'completed'`, [id])).rows.length > 0, 20_000, 20);
      const { rows } = await bed.db.query<{ ms: number }>(`SELECT extract(epoch FROM max((context->>'at')::timestamptz) - min((context->>'at')::timestamptz)) * 1000 AS ms FROM core.event WHERE execution_id = $1 AND event_type = 'command.started'`, [id]);
      apart.push(Math.round(Number(rows[0].ms)));
    }
    // Started together (not one after the other on one worker, nor after a 5 s claim wait).
    expect(apart.filter((ms) => ms > TOGETHER_MS)).toEqual([]);
  }, 120_000);

  it('a resume gives both commands the pause withdrew to waiting workers on two servers at once', async () => {
    const a = await bed.server();
    const b = await bed.server();
    const c = await bed.server();
    expect((await http(c.base, 'POST', '/api/catalog/playbook', { content: fanOut })).status).toBe(201);
    // Issued and withdrawn before any worker runs.
    const id = (await http(c.base, 'POST', '/api/run/playbook', { path: 'fan/two' })).body.execution_id as number;
    expect((await http(c.base, 'POST', `/api/executions/${id}/pause`, {})).status).toBe(200);
    await bed.worker(a.base, 1);
    await bed.worker(b.base, 1);
    await new Promise((r) => setTimeout(r, 800));
    expect((await http(c.base, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
    await until(`execution ${id} completed`, async () => (await bed.db.query(`SELECT 1 FROM core.execution WHERE execution_id = $1 AND status = 'completed'`, [id])).rows.length > 0, 20_000, 20);
    const { rows } = await bed.db.query<{ ms: number }>(`SELECT extract(epoch FROM max((context->>'at')::timestamptz) - min((context->>'at')::timestamptz)) * 1000 AS ms FROM core.event WHERE execution_id = $1 AND event_type = 'command.started'`, [id]);
    expect(Number(rows[0].ms)).toBeLessThan(TOGETHER_MS);
  }, 120_000);
});
