// Shell tasks reach only what they were given (DESIGN.md, Security; issue 25, item 1): a real
// `svc worker`, holding a worker token, an encryption key, a database password and an unrelated
// secret in its environment and data directory, runs an operator's playbook whose tasks try to
// read them, see other processes, write outside their home, fork-bomb and allocate 2 GiB. No
// secret appears in any stored event, the bomb and the allocation end as task errors, and the
// worker goes on beating and running tasks.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let s: WorkerStack;
let dataDir: string;
const encryptionKey = randomBytes(32).toString('hex');
const unrelatedSecret = `aws-${randomBytes(12).toString('hex')}`;
const escapeName = `escape-${randomBytes(6).toString('hex')}`;
const checkout = resolve(import.meta.dirname, '../../..');

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'svc-sandbox-data-'));
  await writeFile(join(dataDir, 'encryption.key'), encryptionKey, { mode: 0o600 });
  s = await startWorkerStack({ workers: 1, concurrency: 2, workerEnv: { SVC_DATA_DIR: dataDir, AWS_SECRET_ACCESS_KEY: unrelatedSecret } });
  await writeFile(join(dataDir, 'worker.token'), s.workerToken, { mode: 0o600 });
  // The worker's own variables reach it from its environment; the database URL carries a password.
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: probe, path: sandbox/probe }
workflow:
  - step: start
    tool: { name: try, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, timeout_seconds: 60 }
`);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const secrets = () => [s.workerToken, encryptionKey, unrelatedSecret, new URL(s.databaseUrl).password].filter((x) => x.length >= 8);

async function attempt(cmd: string) {
  const id = await s.run('sandbox/probe', { cmd });
  const done = await s.wait(id, 60_000);
  const events = JSON.stringify((await http(s.url, 'GET', `/api/events/${id}?limit=1000`)).body);
  return { done, text: `${JSON.stringify(done)}\n${events}` };
}

describe('a sandboxed shell task', () => {
  it('reads none of the worker secrets: environments, command lines, data directory, processes', async () => {
    const tries = [
      `tr '\\0' '\\n' < /proc/$PPID/environ; cat /proc/1/environ`,
      'cat /proc/*/environ; cat /proc/*/cmdline',
      `cat ${dataDir}/encryption.key; cat ${dataDir}/worker.token; ls -la ${dataDir}`,
      'ps ax; env',
      `cat ${checkout}/.svc/encryption.key ${checkout}/.svc/worker.token; ls /root /work`,
    ];
    for (const cmd of tries) {
      const { text } = await attempt(cmd);
      for (const secret of secrets()) expect(text, cmd).not.toContain(secret);
    }
  }, 120_000);

  it('writes nothing outside its home: not the checkout, not the host /tmp, not the data directory', async () => {
    const { done } = await attempt(`for d in ${checkout} /tmp ${dataDir} /usr; do echo x > $d/${escapeName} 2>/dev/null && echo wrote $d; done; echo x > ${escapeName} && echo home-ok`);
    expect(done).toMatchObject({ status: 'completed', result: { stdout: expect.stringMatching(/home-ok\n$/) } });
    expect(JSON.stringify(done.result)).not.toContain('wrote /usr');
    for (const dir of [checkout, tmpdir(), '/tmp', dataDir]) expect(existsSync(join(dir, escapeName)), dir).toBe(false);
  });

  it('a fork bomb and a 2 GiB allocation end as task errors; the worker goes on beating and running tasks', async () => {
    const bomb = await attempt('f(){ f|f; }; f');
    expect(bomb.done).toMatchObject({ status: 'failed', error: { code: 'exit_code', message: expect.stringMatching(/limit \(at most 256 processes/) } });
    const classic = await attempt(':(){ :|:& };:; sleep 1');
    expect(['completed', 'failed']).toContain(classic.done.status);
    const alloc = await attempt('python3 -c "bytearray(2*1024**3)" || perl -e \'$x = "a" x (2*1024**3)\'');
    expect(alloc.done).toMatchObject({ status: 'failed', error: { code: 'exit_code', message: expect.stringMatching(/1024 MB of memory per process/) } });
    const after = new Date();
    const next = await attempt('echo still here');
    expect(next.done).toMatchObject({ status: 'completed', result: { stdout: 'still here\n' } });
    await until('the pool beats after the bomb', async () => {
      const pools = (await http(s.url, 'GET', '/api/worker/pools')).body.pools as { name: string; status: string; heartbeat_at: string }[];
      const pool = pools.find((p) => p.name === s.workers[0].name);
      return pool?.status === 'ready' && new Date(pool.heartbeat_at) > after;
    }, 25_000, 200);
  }, 90_000);
});
