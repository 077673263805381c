// SVC_SHELL_NETWORK=external (docs/operations.md, "The shell sandbox"): a real `svc worker`'s shell
// tasks reach the network from a namespace of their own (passt's pasta), never this machine's
// loopback, where the server's API and the service database listen here, as on a machine running
// `svc start` (the API answers anyone there under SVC_AUTH=none; the database asks a password).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
beforeAll(async () => {
  s = await startWorkerStack({ workers: 1, concurrency: 1, workerEnv: { SVC_SHELL_NETWORK: 'external' } });
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: net, path: sandbox/net }
workflow:
  - step: start
    tool: { name: try, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, timeout_seconds: 60 }
`);
}, 120_000);
afterAll(async () => s?.close());

describe('a shell task of a worker with SVC_SHELL_NETWORK=external', () => {
  it("reaches neither the server's API nor the service database on this machine's loopback, and has a route out", async () => {
    const api = new URL(s.url);
    const database = new URL(s.databaseUrl);
    const targets = [`${api.hostname}/${api.port}`, `${database.hostname}/${database.port || 5432}`];
    const cmd =
      targets.map((t) => `bash -c '(echo > /dev/tcp/${t}) 2>/dev/null' && echo reached-${t.replaceAll('/', ':')} || echo refused`).join('; ') +
      `; awk '$2 == "00000000" { r = 1 } END { print r ? "default-route" : "no-route" }' /proc/net/route`;
    const id = await s.run('sandbox/net', { cmd });
    const done = await s.wait(id, 60_000);
    expect(done).toMatchObject({ status: 'completed', result: { stdout: 'refused\nrefused\ndefault-route\n' } });
  });
});
