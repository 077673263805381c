// A `svc worker` asked to stop while its server answers nothing: the server process stopped with
// SIGSTOP (its socket accepts, nothing answers), as a hung host or a dead network path behaves.
// The worker has nothing to drain, so its first SIGTERM must end it (exit 0), not wait for ever
// on the deregistration (or the registration it was still waiting for).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { spawnSvc, waitForOutput, withTimeout } from '../../helpers/process.ts';

let processes: ServerProcesses;
beforeAll(async () => {
  processes = await ServerProcesses.open({});
});
afterEach(async () => processes.stopAll());
afterAll(async () => processes?.close());

/** The server's process stopped while `body` runs, continued after whatever happens. */
async function frozen<T>(server: { proc: { kill(s: NodeJS.Signals): void } }, body: () => Promise<T>): Promise<T> {
  server.proc.kill('SIGSTOP');
  try {
    return await body();
  } finally {
    server.proc.kill('SIGCONT');
  }
}

describe('svc worker stopped while its server answers nothing', () => {
  it('an idle worker exits 0 on its first SIGTERM, within seconds', async () => {
    const s = await processes.server();
    const w = await processes.worker(s.base, 1);
    const { code, ms } = await frozen(s, async () => {
      const t0 = Date.now();
      // stop() would SIGKILL it after its own timeout: ours is shorter, and says so.
      const code = await withTimeout(w.stop(60_000), 20_000, 'svc worker stop with a frozen server');
      return { code, ms: Date.now() - t0 };
    });
    expect(code).toBe(0);
    expect(ms).toBeLessThan(15_000);
  }, 60_000);

  it('a worker still waiting for its registration to be answered exits 0 on its first SIGTERM', async () => {
    const s = await processes.server();
    const out = await frozen(s, async () => {
      const p = spawnSvc(['worker'], { SVC_SERVER_URL: s.base, SVC_WORKER_CONCURRENCY: '1', SVC_LOG_LEVEL: 'info', SVC_SHELL_SANDBOX_BINDS: processes.dir });
      try {
        // Logged just before the pool registers: its request is then on its way to the frozen server.
        await waitForOutput(p, 'shell tasks run', 30_000);
        await new Promise((r) => setTimeout(r, 500));
        p.kill('SIGTERM');
        return { code: await withTimeout(p.exited, 20_000, 'svc worker stop while registering'), output: p.output() };
      } finally {
        p.kill('SIGKILL');
      }
    });
    expect(out.output).not.toMatch(/claiming from/);
    expect(out.code).toBe(0);
  }, 60_000);
});
