// SVC_SHELL_NETWORK=external with namespaces made ahead (src/worker/tools/network-namespaces.ts):
// a real `svc worker` keeps pasta and a holder process per namespace between tasks, so a task
// enters a namespace that exists already. Concurrent tasks get different namespaces; a namespace
// whose holder died is made again (never the host's network); none outlives the worker's SIGKILL.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAlive } from '../../helpers/process-alive.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
beforeAll(async () => {
  s = await startWorkerStack({ workers: 1, concurrency: 2, workerEnv: { SVC_SHELL_NETWORK: 'external' } });
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: net, path: sandbox/netns }
workflow:
  - step: start
    tool: { name: try, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, timeout_seconds: 60 }
`);
}, 120_000);
afterAll(async () => s?.close());

const children = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
const comm = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};
// The worker's pasta processes (passt's binary may be named passt.avx2) and their holders (a
// namespace still being made has pasta's own process there: killed, pasta would never start it).
const pastas = (worker: number) => children(worker).filter((pid) => /^(pasta|passt)/.test(comm(pid)));
const holders = (worker: number) => pastas(worker).flatMap(children);
const settled = (worker: number) => pastas(worker).every((pid) => children(pid).every((holder) => comm(holder) === 'sh'));

const probe =
  `bash -c '(echo > /dev/tcp/127.0.0.1/${'$'}{PORT:-1}) 2>/dev/null' && echo reached-loopback || echo loopback-refused; ` +
  `awk '$2 == "00000000" { r = 1 } END { print r ? "default-route" : "no-route" }' /proc/net/route`;

async function runCmd(cmd: string, env = ''): Promise<unknown> {
  const id = await s.run('sandbox/netns', { cmd: `${env}${cmd}` });
  return s.wait(id, 60_000);
}

describe('a worker with SVC_SHELL_NETWORK=external', () => {
  it("keeps its namespaces between tasks: a task's network is made ahead, never the host's loopback", async () => {
    const api = new URL(s.url);
    expect(await runCmd(probe, `PORT=${api.port}; `)).toMatchObject({ status: 'completed', result: { stdout: 'loopback-refused\ndefault-route\n' } });
    // Idle now: the namespace the task ran in stands, held for the next task.
    expect(holders(s.workers[0].pid).length).toBeGreaterThan(0);
  });

  it("runs concurrent tasks in namespaces of their own: one cannot reach the other's listener on 127.0.0.1", async () => {
    const port = 47_000 + Math.floor(Math.random() * 1000);
    const listen =
      `python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', ${port})); s.listen(); s.settimeout(6)\n` +
      `try:\n  s.accept(); print('accepted')\nexcept OSError: print('none')"`;
    const connect = `sleep 1.5; bash -c '(echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null' && echo reached || echo refused`;
    const [a, b] = await Promise.all([runCmd(listen), runCmd(connect)]);
    expect(a).toMatchObject({ status: 'completed', result: { stdout: 'none\n' } });
    expect(b).toMatchObject({ status: 'completed', result: { stdout: 'refused\n' } });
    // The listener's own namespace does reach it (the check above is not vacuous).
    const self = `{ ${listen} & sleep 1; bash -c '(echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null' && echo reached || echo refused; wait; } | sort`;
    expect(await runCmd(self)).toMatchObject({ status: 'completed', result: { stdout: 'accepted\nreached\n' } });
  }, 60_000);

  it('makes a namespace again when its holder was killed, still without the host loopback', async () => {
    const worker = s.workers[0].pid;
    await until('no namespace is being made', () => settled(worker), 10_000);
    const killed = holders(worker);
    expect(killed.length).toBeGreaterThan(0);
    for (const pid of killed) process.kill(pid, 'SIGKILL');
    await until('the killed holders are gone', () => killed.every((pid) => !processAlive(pid)), 5_000);
    const api = new URL(s.url);
    expect(await runCmd(probe, `PORT=${api.port}; `)).toMatchObject({ status: 'completed', result: { stdout: 'loopback-refused\ndefault-route\n' } });
    expect(holders(worker).filter((pid) => killed.includes(pid))).toEqual([]);
    expect(holders(worker).length).toBeGreaterThan(0);
  });

  it('ends the holder of a pasta killed by hand, and makes the namespace again', async () => {
    const worker = s.workers[0].pid;
    await until('no namespace is being made', () => settled(worker), 10_000);
    const killed = pastas(worker);
    const orphans = killed.flatMap(children);
    expect(orphans.length).toBeGreaterThan(0);
    for (const pid of killed) process.kill(pid, 'SIGKILL');
    await until('the holders of the killed pastas are gone', () => orphans.every((pid) => !processAlive(pid)), 5_000);
    const api = new URL(s.url);
    expect(await runCmd(probe, `PORT=${api.port}; `)).toMatchObject({ status: 'completed', result: { stdout: 'loopback-refused\ndefault-route\n' } });
  });

  it('leaves no pasta and no holder behind when the worker is SIGKILLed', async () => {
    const worker = s.workers[0];
    const left = [...pastas(worker.pid), ...holders(worker.pid)];
    expect(left.length).toBeGreaterThan(1);
    await worker.kill();
    await until('pasta and the holders are gone', () => left.every((pid) => !processAlive(pid)), 5_000);
    // The stack's close() drains its workers: this one is gone already.
    s.workers.splice(0, 1);
  });
});
