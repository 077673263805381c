// SVC_SHELL_NETWORK=false (none) and `external` keep a shell task off this machine's loopback and
// its cloud metadata service (docs/operations.md, "What a task can reach"), but only the sandbox's
// namespaces do that: a worker also given SVC_SHELL_SANDBOX=off (a container without user
// namespaces) ran its tasks with the host's network, the setting silently ignored, and a task
// reached the server's API on 127.0.0.1. Such a worker now refuses shell tasks, as one with
// `external` and no pasta does, never falling back to the host's network.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerProcess, startWorkerStack, type WorkerProcess, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
let open: WorkerProcess | undefined;
beforeAll(async () => {
  s = await startWorkerStack({ workers: 1, concurrency: 1, workerEnv: { SVC_SHELL_SANDBOX: 'off', SVC_SHELL_NETWORK: 'false' } });
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: net, path: sandbox/unsandboxed_net }
workflow:
  - step: start
    tool: { name: try, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, timeout_seconds: 30 }
`);
}, 120_000);
afterAll(async () => {
  await open?.stop();
  await s?.close();
});

const api = () => new URL(s.url);
const reachApi = () => `bash -c '(echo > /dev/tcp/${api().hostname}/${api().port}) 2>/dev/null' && echo reached-api || echo refused`;

describe('a worker with SVC_SHELL_SANDBOX=off and SVC_SHELL_NETWORK=false', () => {
  it('says at start that it refuses shell tasks, and refuses them: none reaches the host\'s network', async () => {
    const done = await s.wait(await s.run('sandbox/unsandboxed_net', { cmd: reachApi() }), 30_000);
    expect(JSON.stringify(done)).not.toContain('reached-api');
    expect(done).toMatchObject({ status: 'failed', error: { code: 'sandbox_unavailable', message: expect.stringMatching(/SVC_SHELL_NETWORK=false/) } });
    expect(s.workers[0].output()).toMatch(/shell tasks are refused: SVC_SHELL_NETWORK=false \(no network\) holds only inside the sandbox, and SVC_SHELL_SANDBOX=off/);
  });

  it('runs them, unsandboxed with the host\'s network, where that is what it was given (SVC_SHELL_NETWORK=true)', async () => {
    await s.workers[0].stop();
    open = await startWorkerProcess(s.url, { concurrency: 1, env: { SVC_WORKER_TOKEN: s.workerToken, SVC_SHELL_SANDBOX: 'off', SVC_SHELL_NETWORK: 'true' } });
    const done = await s.wait(await s.run('sandbox/unsandboxed_net', { cmd: reachApi() }), 30_000);
    expect(done).toMatchObject({ status: 'completed', result: { stdout: 'reached-api\n' } });
  });
});
