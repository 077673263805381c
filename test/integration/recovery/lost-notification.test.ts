// A command whose notification never reached the claimers: the reaper republishes it and it runs.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandBus } from '../../../src/bus/command-bus.ts';
import { reapStrandedCommands, reaperSchedule } from '../../../src/periodic/command-reaper.ts';
import { every } from '../../../src/periodic/every.ts';
import { createLogger } from '../../../src/log.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { startSecondServer, startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

// The worker's long poll waits this long for a notification: far beyond what the test waits, so
// only a notification (not the poll's own timeout) can bring the command to it.
const CLAIM_WAIT_MS = 30_000;

/** The test hook: a bus that swallows the next `n` notifications its waiters would hear. */
function droppingBus(real: CommandBus, n: number): CommandBus & { dropped(): number } {
  let toDrop = n;
  let dropped = 0;
  return {
    async next(timeoutMs, signal) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const woken = await real.next(deadline - Date.now(), signal);
        if (!woken || toDrop === 0) return woken;
        toDrop--;
        dropped++;
      }
    },
    get connected() {
      return real.connected;
    },
    publish: (count, stranded) => real.publish(count, stranded),
    strandedHeard: () => real.strandedHeard(),
    close: () => real.close(),
    dropped: () => dropped,
  };
}

let t: TestApp;
let other: Awaited<ReturnType<typeof startSecondServer>>;
let worker: Worker;
let stopReaper: (() => Promise<void>) | undefined;
beforeAll(async () => {
  t = await startTestApp({ SVC_COMMAND_REAPER_INTERVAL_SECONDS: '1', SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS: '1' });
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  other = await startSecondServer(t);
  worker = new Worker({ token: t.workerToken, serverUrl: t.url, concurrency: 1, env: {}, log: createLogger('silent', sink), claimWaitMs: CLAIM_WAIT_MS });
});
afterAll(async () => {
  await stopReaper?.();
  await worker?.stop();
  await other?.close();
  await t?.close();
});

describe('a lost notification', () => {
  it('leaves the command waiting until the reaper republishes it; then it runs', async () => {
    const api = executionApi(t.url);
    await api.register('apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: lost, path: recovery/lost }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n');
    const bus = droppingBus(t.deps.bus, 1);
    t.deps.bus = bus;
    await worker.start();
    // The worker's long poll is waiting (nothing pending yet) when the command is issued.
    await new Promise((r) => setTimeout(r, 500));
    // Started through another server: a start on the worker's own server would hand the command
    // to its waiting claim in the start's write (actors/parked-claims.ts), no notification needed.
    const id = await executionApi(other.url).run('recovery/lost');
    await until('the notification to be dropped', () => bus.dropped() === 1);
    // Without the reaper nothing wakes the claimer: the command stays PENDING.
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status).toBe('running');
    const pending = await t.deps.db.query<{ status: string }>(`SELECT status FROM core.command WHERE execution_id = $1`, [id]);
    expect(pending.rows[0].status).toBe('PENDING');

    const t0 = Date.now();
    // The reaper as the server runs it (src/periodic/start-periodic.ts).
    const reaper = every(t.deps, reaperSchedule(t.deps.config), () => reapStrandedCommands(t.deps, 'timer'));
    stopReaper = () => reaper.stop();
    const done = await api.wait(id, 10_000);
    expect(done.status).toBe('completed');
    expect(Date.now() - t0).toBeLessThan(10_000);
    const republished = (await t.deps.metrics.reaperRepublished.get()).values.find((v) => v.labels.reason === 'pending_stale');
    expect(republished?.value).toBeGreaterThanOrEqual(1);
    expect((await t.deps.metrics.reaperSweeps.get()).values.find((v) => v.labels.trigger === 'timer')?.value).toBeGreaterThanOrEqual(1);
  });
});
