// A shell task's private home is "made for the task and removed after it" (docs/operations.md, The
// shell sandbox), but a worker SIGKILLed while the task ran (or whose machine lost power) left the
// home (svc-task-*, right in the temp directory) on its disk for good, with whatever the task wrote
// there. Each worker process now keeps its homes in a directory of its own holding a socket it
// listens on; a worker starting on the same temp directory removes the directories whose socket
// refuses, and leaves a live worker's alone (workers may share a temp directory, in other pid
// namespaces too). Real `svc worker` processes, one temp directory.
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, utimes } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { sweepTaskHomes } from '../../../src/worker/tools/task-homes.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerProcess, startWorkerStack, type WorkerProcess, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
let workerTmp: string;
const workers: WorkerProcess[] = [];
beforeAll(async () => {
  workerTmp = await mkdtemp(join(tmpdir(), 'svc-homes-killed-'));
  // A root worker's task user must get through the worker's temp directory to its home.
  await chmod(workerTmp, 0o755);
  s = await startWorkerStack({ workers: 0 });
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: held, path: homes/held }
workload: { mark: none }
workflow:
  - step: start
    tool: { name: hold, kind: shell, env: { MARK: "{{ workload.mark }}" }, command: 'echo "$MARK" > mark; sleep 300' }
`);
}, 120_000);
afterAll(async () => {
  // The held tasks would keep a drain waiting: their workers are killed, and their tasks with them.
  for (const w of workers) await w.kill();
  await s?.close();
  await rm(workerTmp, { recursive: true, force: true });
});

const worker = async (): Promise<WorkerProcess> => {
  const w = await startWorkerProcess(s.url, { concurrency: 1, env: { SVC_WORKER_TOKEN: s.workerToken, TMPDIR: workerTmp } });
  workers.push(w);
  return w;
};

/** The home (in workerTmp, or in a worker's directory there) whose task wrote `mark`. */
async function homeOf(mark: string): Promise<string | undefined> {
  const names = await readdir(workerTmp);
  const homes = names.filter((name) => name.startsWith('svc-task-')).map((name) => join(workerTmp, name));
  for (const name of names.filter((name) => name.startsWith('svc-worker-'))) {
    for (const home of await readdir(join(workerTmp, name)).catch(() => [])) homes.push(join(workerTmp, name, home));
  }
  for (const home of homes) if ((await readFile(join(home, 'mark'), 'utf8').catch(() => '')) === `${mark}\n`) return home;
  return undefined;
}

describe("the home of a killed worker's task", () => {
  it('is removed by the next worker on the same temp directory; a live worker\'s is left alone', async () => {
    const doomed = await worker();
    await s.run('homes/held', { mark: 'doomed' });
    const doomedHome = await until('the doomed task\'s home', () => homeOf('doomed'), 30_000, 100);
    // The first worker is busy (one slot): the second one takes this task.
    await worker();
    await s.run('homes/held', { mark: 'alive' });
    const aliveHome = await until('the live task\'s home', () => homeOf('alive'), 30_000, 100);

    await doomed.kill();
    expect(existsSync(doomedHome), 'left by the killed worker until another starts').toBe(true);

    // A worker sweeps before it registers: its start line comes after.
    const next = await worker();
    expect(existsSync(doomedHome), next.output()).toBe(false);
    expect(next.output()).toContain(`removed ${dirname(doomedHome)}`);
    expect(await homeOf('alive'), 'the live worker\'s home').toBe(aliveHome);
  }, 90_000);
});

describe('a worker directory without its socket', () => {
  it('is left while it may be a worker just starting, removed after a minute; one that answers is kept', async () => {
    const under = await mkdtemp(join(tmpdir(), 'svc-homes-sweep-'));
    const server = createServer((socket) => socket.destroy());
    try {
      const starting = join(under, 'svc-worker-starting');
      const stale = join(under, 'svc-worker-stale');
      const answering = join(under, 'svc-worker-answering');
      for (const dir of [starting, stale, answering]) await mkdir(join(dir, 'svc-task-x'), { recursive: true });
      await new Promise<void>((resolve) => server.listen(join(answering, 'alive.sock'), resolve));
      const old = new Date(Date.now() - 120_000);
      for (const dir of [stale, answering]) await utimes(dir, old, old);

      await sweepTaskHomes(createLogger('silent'), under);
      expect((await readdir(under)).sort()).toEqual(['svc-worker-answering', 'svc-worker-starting']);
    } finally {
      server.close();
      await rm(under, { recursive: true, force: true });
    }
  });
});
