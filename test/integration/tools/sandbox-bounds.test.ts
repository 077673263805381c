// What a hostile playbook tries beyond reading the worker's secrets (worker/shell-sandbox.test.ts),
// through a real `svc worker` with its default sandbox: writing to the sandbox's memory-backed
// places (its root, /dev, an endless /tmp), a user namespace of its own whose root could mount
// more, and a workload whose `env:` mapping names the sandbox's own variables. Each ends as a task
// error, or with nothing written, and the worker runs the next task.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
beforeAll(async () => {
  // Small scratch bounds so that filling them takes no time: /tmp and /dev/shm hold 4 MB each.
  s = await startWorkerStack({ workers: 1, concurrency: 2, workerEnv: { SVC_SHELL_FILE_MB: '4' } });
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: bounds, path: sandbox/bounds }
workflow:
  - step: start
    tool: { name: try, kind: shell, command: 'eval "$CMD"', env: "{{ workload.env }}", timeout_seconds: 60 }
`);
}, 120_000);
afterAll(async () => s?.close());

async function attempt(env: Record<string, string>) {
  const id = await s.run('sandbox/bounds', { env });
  return s.wait(id, 60_000);
}

describe('a sandboxed shell task of a real worker', () => {
  it('writes nothing to the root or /dev, and fills its /tmp only to the bound, with an error saying so', async () => {
    const ro = await attempt({ CMD: 'for p in /x /etc/x /dev/x; do (echo > $p) 2>/dev/null && echo "wrote $p"; done; echo done' });
    expect(ro).toMatchObject({ status: 'completed', result: { stdout: 'done\n' } });
    const fill = await attempt({ CMD: 'i=0; while [ $i -lt 10 ]; do head -c 1M /dev/zero > /tmp/f$i || exit 1; i=$((i+1)); done' });
    expect(fill).toMatchObject({ status: 'failed', error: { code: 'exit_code', message: 'command exited with code 1; it may have filled /tmp or /dev/shm (at most 4 MB each in the sandbox)' } });
  });

  it('cannot make a user namespace of its own to mount a file system', async () => {
    const done = await attempt({ CMD: "unshare -rm sh -c 'mount -t tmpfs none /home/task && echo mounted' 2>/dev/null; echo done" });
    expect(done).toMatchObject({ status: 'completed', result: { stdout: 'done\n' } });
  });

  it("refuses a workload's env naming the sandbox's own variables: their values never run", async () => {
    const done = await attempt({ CMD: 'echo data', SVC_TASK_DEFERRED: '$(echo${IFS}injected>&2)' });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'invalid_task' } });
    // The workload holds the text; no output of the task does.
    expect(JSON.stringify([done.result, done.error])).not.toContain('injected');
    expect(await attempt({ CMD: 'echo still here' })).toMatchObject({ status: 'completed', result: { stdout: 'still here\n' } });
  });
});
