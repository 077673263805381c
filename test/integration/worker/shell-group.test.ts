// A killed worker leaves no shell task running (issue 10, item 8): a real `svc worker` runs a
// shell task that starts a background child and waits; SIGKILL of the worker takes the task's
// shell and its child with it within moments (the watcher in the task's process group sees its
// pipe from the worker close, and kills the group).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';
import { processAlive } from '../../helpers/process-alive.ts';
import { until } from '../../helpers/until.ts';

let s: WorkerStack;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-shell-group-'));
  // The task writes its pids to a host file: unsandboxed (the sandboxed case: test/integration/tools/shell.test.ts).
  s = await startWorkerStack({ workers: 1, workerEnv: { SVC_SHELL_SANDBOX: 'off' } });
}, 120_000);
afterAll(async () => {
  // The killed worker cannot drain; the stack's close would report it.
  await s?.workers[0].kill();
  s.workers.length = 0;
  await s?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('shell tasks of a killed worker', () => {
  it('die with it, children included, even when it is killed with SIGKILL', async () => {
    const pidFile = join(dir, 'pids');
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: long, path: group/long }
workflow:
  - step: start
    tool: [ { name: wait, kind: shell, command: "sleep 300 & echo $$ $! > ${pidFile}; wait" } ]
`);
    await s.run('group/long');
    let pids: number[] = [];
    await until('the task wrote its pids', async () => {
      pids = (await readFile(pidFile, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean).map(Number);
      return pids.length === 2;
    }, 20_000, 50);
    expect(pids.every(processAlive)).toBe(true);
    await s.workers[0].kill();
    await until('the task shell and its child are gone', () => !pids.some(processAlive), 3_000);
  });
});
