// A worker silent past the stale threshold (SIGSTOP here; a hung host, a cut-off network) has its
// command taken over by another worker, whose attempt finishes it. When the first wakes up, its
// attempt went on running: a shell task kept doing its work beside (and after) the second's,
// until it ended by itself, only for its report to be refused. Its next heartbeat now names the
// command as superseded and the worker stops the task.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { executionApi } from '../../helpers/execution-api.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const REAPER_ENV = { SVC_COMMAND_REAPER_INTERVAL_SECONDS: '1', SVC_COMMAND_REAPER_WORKER_STALE_SECONDS: '5' };

let processes: ServerProcesses;
beforeAll(async () => {
  processes = await ServerProcesses.open(REAPER_ENV);
});
afterEach(async () => processes.stopAll());
afterAll(async () => processes?.close());

const size = async (file: string) => (await stat(file).catch(() => ({ size: 0 }))).size;

it("a worker that wakes up after another took its command over stops the command's task", async () => {
  const base = (await processes.server()).base;
  const api = executionApi(base);
  const mark = join(processes.dir, 'first');
  const ticks = join(processes.dir, 'ticks');
  await writeFile(ticks, '');
  // The first attempt ticks into a host file for up to 60 s; the second answers at once.
  await api.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: ticking, path: recovery/ticking }
workflow:
  - step: start
    tool:
      - name: run
        kind: shell
        env: { MARK: "${mark}", TICKS: "${ticks}" }
        command: 'if [ -e "$MARK" ]; then echo second; else touch "$MARK"; i=0; while [ $i -lt 300 ]; do echo tick >> "$TICKS"; sleep 0.2; i=$((i+1)); done; echo first; fi'
`);
  // Unsandboxed: the task writes host files the test reads.
  const a = await processes.worker(base, 1, { SVC_SHELL_SANDBOX: 'off' });
  const id = await api.run('recovery/ticking');
  await until('the first attempt to tick', async () => ((await size(ticks)) > 0 ? true : undefined));
  process.kill(a.pid, 'SIGSTOP');
  let resumed = false;
  try {
    const b = await processes.worker(base, 1, { SVC_SHELL_SANDBOX: 'off' });
    expect(await api.wait(id, 30_000)).toMatchObject({ status: 'completed', result: { stdout: 'second\n' } });
    process.kill(a.pid, 'SIGCONT');
    resumed = true;
    // Its next heartbeat (every 2 s while busy) stops the task: the ticks stop well before 60 s.
    const stopped = await until(
      'the first attempt to stop ticking',
      async () => {
        const before = await size(ticks);
        await new Promise((r) => setTimeout(r, 1_500));
        return (await size(ticks)) === before ? true : undefined;
      },
      20_000,
    );
    expect(stopped).toBe(true);
    expect(a.output()).toMatch(/was taken over by another claim; stopping it here/);
    // Still one completion, the second worker's.
    const events = await api.events(id);
    expect(events.filter((e: { event_type: string; context?: { refused?: string } }) => e.event_type === 'command.completed' && !e.context?.refused)).toHaveLength(1);
    expect((await readFile(ticks, 'utf8')).split('\n').length).toBeLessThan(250);
    await b.stop();
  } finally {
    if (!resumed) process.kill(a.pid, 'SIGCONT');
  }
});
