import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

// Short intervals so the test spans many busy periods; the idle one is longer than the whole test,
// so only the busy schedule can keep heartbeat_at fresh.
const BUSY_HEARTBEAT_MS = 200;
const IDLE_HEARTBEAT_MS = 120_000;
const SAMPLE_FOR_MS = 3_000;
const SAMPLE_AT_MOST_MS = 30_000;
const MIN_COMMANDS_SAMPLED = 20;
const SAMPLE_EVERY_MS = 50;
const LOOP_ITEMS = 1_000;

let s: TestStack;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-heartbeat-'));
  // Its tasks touch gate files the test watches on the host: unsandboxed.
  s = await startTestStack({ workers: 1, concurrency: 1, workerOptions: { busyHeartbeatIntervalMs: BUSY_HEARTBEAT_MS, idleHeartbeatIntervalMs: IDLE_HEARTBEAT_MS, shell: UNSANDBOXED_SHELL } });
});
afterAll(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function pool(name: string): Promise<{ beatAt: number; ageMs: number }> {
  const { rows } = await s.deps.db.query<{ beat_at: Date; age_ms: number }>(
    `SELECT heartbeat_at AS beat_at, (extract(epoch FROM clock_timestamp() - heartbeat_at) * 1000)::float8 AS age_ms
       FROM core.runtime WHERE kind = 'worker_pool' AND name = $1`,
    [name],
  );
  return { beatAt: rows[0].beat_at.getTime(), ageMs: rows[0].age_ms };
}

async function completedCommands(executionId: number): Promise<number> {
  const { rows } = await s.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.command WHERE execution_id = $1 AND status = 'COMPLETED'`, [executionId]);
  return rows[0].n;
}


describe('worker pool heartbeat', () => {
  it('keeps beating through a stream of short commands, and a cancel still reaches a running one', async () => {
    const flag = join(dir, 'go-slow');
    const sleeping = join(dir, 'sleeping');
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: stream, path: worker/stream }
workflow:
  - step: start
    loop: { in: "{{ workload.items }}", iterator: item, mode: sequential }
    tool:
      name: tick
      kind: shell
      command: 'if [ -e "{{ workload.flag }}" ]; then touch "{{ workload.sleeping }}"; sleep 30; fi'
`);
    const worker = s.workers[0];
    const id = await s.run('worker/stream', { items: Array.from({ length: LOOP_ITEMS }, (_, i) => i), flag, sleeping });
    // Failed midway, the loop would hold the pool's one slot through the next test.
    onTestFinished(async () => void (await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test over' })));
    await until('the loop runs', async () => (await completedCommands(id)) >= 3, 15_000);

    // Sample the pool row while the worker runs one short command after another.
    const beats = new Set<number>();
    let maxAgeMs = 0;
    const doneBefore = await completedCommands(id);
    const t0 = Date.now();
    // At least SAMPLE_FOR_MS, and until 20 commands ran meanwhile: a loaded machine runs fewer
    // short commands a second, and the sample must span many busy periods either way.
    let doneDuring = 0;
    while (Date.now() - t0 < SAMPLE_FOR_MS || (doneDuring < MIN_COMMANDS_SAMPLED && Date.now() - t0 < SAMPLE_AT_MOST_MS)) {
      const row = await pool(worker.name);
      beats.add(row.beatAt);
      maxAgeMs = Math.max(maxAgeMs, row.ageMs);
      await new Promise((r) => setTimeout(r, SAMPLE_EVERY_MS));
      doneDuring = (await completedCommands(id)) - doneBefore;
    }
    // The pool really was busy with many short commands (each one turns it from idle to busy).
    expect(doneDuring).toBeGreaterThanOrEqual(MIN_COMMANDS_SAMPLED);
    expect((await http(s.url, 'GET', `/api/executions/${id}`)).body.status).toBe('running');
    // ~15 beats are due; allow for a loaded machine, but a pool that never beats shows one value
    // (its registration) and an age of the whole sampling time.
    expect(beats.size).toBeGreaterThanOrEqual(4);
    expect(maxAgeMs).toBeLessThan(10 * BUSY_HEARTBEAT_MS);

    // Now an item runs long; cancelling the execution must stop it through the heartbeat answer.
    writeFileSync(flag, '');
    await until('an item sleeps', () => existsSync(sleeping), 15_000);
    const cancel = await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'heartbeat test' });
    expect(cancel.body.status).toBe('cancelled');
    const cancelledAt = Date.now();
    await until('the sleeping command stops', () => worker.running === 0, 10_000);
    const stoppedInMs = Date.now() - cancelledAt;
    expect(stoppedInMs).toBeLessThan(5_000);
    expect((await s.wait(id)).status).toBe('cancelled');
  });

  it('a busy pool that was marked stopped on the server registers again at its next beat', async () => {
    const gate = join(dir, 'gate');
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: hold, path: worker/hold }
workflow:
  - step: start
    tool: { name: wait, kind: shell, command: 'touch "{{ workload.gate }}"; sleep 30' }
`);
    const worker = s.workers[0];
    const id = await s.run('worker/hold', { gate });
    await until('the command runs', () => existsSync(gate), 15_000);
    expect((await http(s.url, 'POST', '/api/worker/pool/deregister', { name: worker.name }, asWorker)).status).toBe(200);
    const status = async () => (await s.deps.db.query<{ status: string }>(`SELECT status FROM core.runtime WHERE kind = 'worker_pool' AND name = $1`, [worker.name])).rows[0].status;
    expect(await status()).toBe('stopped');
    await until('the pool is ready again', async () => (await status()) === 'ready', 20 * BUSY_HEARTBEAT_MS);
    // The cancel still reaches the running command through the beats that follow.
    expect((await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'done' })).body.status).toBe('cancelled');
    await until('the command stops', () => worker.running === 0, 10_000);
    const events = await s.events(id);
    const error = events.find((e) => e.event_type === 'call.error');
    expect(error?.error).toEqual({ code: 'cancelled', message: 'task stopped: its command was cancelled' });
  });
});
