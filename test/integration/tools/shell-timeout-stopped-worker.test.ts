// A shell task's timeout_seconds holds while its worker stands still: a real `svc worker`,
// sandboxed (the default) and with SVC_SHELL_SANDBOX=off, is SIGSTOPped right after its task
// starts. The worker's own timer cannot fire then; the watchdog beside the task's process group
// (supervisor-argv.ts) ends the task, and the resumed worker reports the attempt timed out. And
// runShell with a signal that never fires (a timer that does not run): the watchdog's SIGKILL
// ends what ignores its SIGTERM; a task that ends before its deadline is reported as it ended.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeShellSandbox } from '../../../src/worker/tools/probe-shell-sandbox.ts';
import { runShell, WATCHDOG_MARGIN_MS } from '../../../src/worker/tools/shell.ts';
import { DEFAULT_SHELL_SETTINGS } from '../../../src/worker/tools/shell-settings.ts';
import { SHELL_KILL_GRACE_MS } from '../../../src/worker/tools/spawn-in-group.ts';
import type { Json } from '../../helpers/http.ts';
import { processAlive } from '../../helpers/process-alive.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

/** Host pids whose command line contains `marker` (a task's processes, seen from outside its sandbox). */
async function hostPids(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

// Long enough that the task is seen running (a scan of the host's process table, slow on a busy
// machine) and its worker stopped before it times out: at 1 s a loaded CI missed the task.
const TIMEOUT_SECONDS = 3;

const size = async (path: string) => (await stat(path).catch(() => undefined))?.size ?? 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each<{ mode: string; workerEnv: Record<string, string> }>([
  { mode: 'sandboxed', workerEnv: {} },
  { mode: 'unsandboxed', workerEnv: { SVC_SHELL_SANDBOX: 'off' } },
])('a $mode shell task whose worker is SIGSTOPped', ({ mode, workerEnv }) => {
  let s: WorkerStack;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-shell-stopped-'));
    s = await startWorkerStack({ workers: 1, concurrency: 1, workerEnv });
    // A background sleep named by the workload (found in the host's process table) and a loop
    // that appends to MARK every 100 ms (a host file when unsandboxed; its home in the sandbox).
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: stopped, path: stopped/run }
workflow:
  - step: start
    tool:
      name: run
      kind: shell
      env: { MARK: "{{ workload.mark }}", NAP: "{{ workload.nap }}" }
      command: 'sleep "$NAP" & while :; do echo x >> "$MARK"; sleep 0.1; done'
      timeout_seconds: ${TIMEOUT_SECONDS}
`);
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is ended at its timeout while the worker stands still, and reported timed out once it runs again', async () => {
    const worker = s.workers[0];
    // A number of seconds no other process names: the task's sleep, wherever it runs.
    const nap = `29.${process.pid}${Date.now() % 100_000}`;
    const mark = mode === 'unsandboxed' ? join(dir, 'mark') : '/home/task/mark';
    const id = await s.run('stopped/run', { mark, nap });
    const pids = await until('the task to start', async () => {
      const found = await hostPids(nap);
      return found.length ? found : undefined;
    }, 30_000);
    process.kill(worker.pid, 'SIGSTOP');
    let resumed = false;
    try {
      // The timeout, the watchdog a moment later: 2 s after it the task is gone, the worker still stopped.
      await sleep(TIMEOUT_SECONDS * 1000 + 2_000);
      expect(await hostPids(nap)).toEqual([]);
      for (const pid of pids) expect(processAlive(pid)).toBe(false);
      if (mode === 'unsandboxed') {
        const before = await size(mark);
        expect(before).toBeGreaterThan(0);
        await sleep(500);
        expect(await size(mark)).toBe(before);
      }
      process.kill(worker.pid, 'SIGCONT');
      resumed = true;
      const done = await s.wait(id, 30_000);
      expect(done).toMatchObject({ status: 'failed', error: { code: 'timeout', message: 'task timed out' } });
      // The attempt's own record says the same: a timeout, not an exit code nor an abort.
      const calls = (await s.events(id)).filter((e: Json) => e.event_type === 'call.error' || e.event_type === 'call.done');
      expect(calls.map((e: Json) => ({ type: e.event_type, code: e.error?.code, message: e.error?.message }))).toEqual([{ type: 'call.error', code: 'timeout', message: 'task timed out' }]);
    } finally {
      if (!resumed) process.kill(worker.pid, 'SIGCONT');
    }
  }, 60_000);
});

describe.each([{ sandbox: true }, { sandbox: false }])('runShell with a timeout its signal never enforces (sandbox $sandbox)', ({ sandbox }) => {
  const never = new AbortController().signal;

  it('is ended by the watchdog, SIGKILL after the grace period for what ignores SIGTERM, and reported timed out', async () => {
    const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, sandbox });
    const started = performance.now();
    const outcome = await runShell(host, { command: 'trap "" TERM; echo ready; while :; do sleep 0.1; done', env: {}, timeoutMs: 200 }, never);
    const took = performance.now() - started;
    expect(outcome).toEqual({ status: 'error', data: { exit_code: null, stdout: 'ready\n', stderr: '' }, error: { code: 'timeout', message: 'task timed out' } });
    expect(took).toBeGreaterThanOrEqual(200 + WATCHDOG_MARGIN_MS + SHELL_KILL_GRACE_MS - 50);
    expect(took).toBeLessThan(200 + WATCHDOG_MARGIN_MS + SHELL_KILL_GRACE_MS + 3_000);
  }, 20_000);

  it('a task that ends before its deadline is reported as it ended', async () => {
    const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, sandbox });
    expect(await runShell(host, { command: 'echo done; exit 3', env: {}, timeoutMs: 5_000 }, never)).toMatchObject({ status: 'error', error: { code: 'exit_code' }, data: { exit_code: 3, stdout: 'done\n' } });
    expect(await runShell(host, { command: 'echo done', env: {}, timeoutMs: 5_000 }, never)).toEqual({ status: 'ok', data: { exit_code: 0, stdout: 'done\n', stderr: '' } });
  });
});
