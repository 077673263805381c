// Issue 25, items 2 and 5: no `svc` process that lives on keeps a secret in /proc/<pid>/environ
// or its command line (secrets given in the environment are moved out by a re-execution; _FILE
// variables are read into memory), and a worker started before its server waits and registers.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { TEST_WORKER_TOKEN } from '../../helpers/auth.ts';
import { spawnSvc, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
const spawned: SvcProcess[] = [];

beforeAll(async () => {
  bed = await ServerProcesses.open({});
});
afterEach(async () => {
  for (const p of spawned.splice(0)) {
    p.kill('SIGKILL');
    await p.exited;
  }
  await bed.stopAll();
});
afterAll(async () => bed?.close());

/** The NUL-separated environment and command line the kernel shows for `pid`, as text. */
function procText(pid: number): string {
  return ['environ', 'cmdline'].map((f) => readFileSync(`/proc/${pid}/${f}`, 'utf8')).join('\n');
}

describe('secrets out of the environment', () => {
  it('a server and a worker given secrets in their environment hold none of them there', async () => {
    const key = randomBytes(32).toString('base64');
    const server = await bed.server({ SVC_ENCRYPTION_KEY: key });
    const worker = spawnSvc(['worker'], { SVC_SERVER_URL: server.base, SVC_WORKER_CONCURRENCY: '1' });
    spawned.push(worker);
    await until('worker registered', () => /claiming from/.test(worker.output()), 20_000);

    const serverText = procText(server.proc.proc.pid!);
    const workerText = procText(worker.proc.pid!);
    for (const secret of [key, TEST_WORKER_TOKEN, bed.database.url]) {
      expect(serverText).not.toContain(secret);
      expect(workerText).not.toContain(secret);
    }
    // The same processes (same pids) serve: the re-execution kept them.
    const pools = await (await fetch(`${server.base}/api/worker/pools`)).json();
    expect(JSON.stringify(pools)).toContain(`"pid":${worker.proc.pid}`);
  });

  it('`svc doctor serve`, which serves until stopped, holds its API token only in memory', async () => {
    const token = `svc_${randomBytes(16).toString('hex')}`;
    const server = await bed.server({});
    const port = await freePort();
    const tokenFile = join(bed.dir, 'doctor-serve.token');
    const doctor = spawnSvc(['doctor', 'serve', '--port', String(port), '--token-file', tokenFile], { SVC_SERVER_URL: server.base, SVC_API_TOKEN: token });
    spawned.push(doctor);
    await until('doctor serving', () => /svc doctor serving/.test(doctor.output()), 20_000);
    expect(procText(doctor.proc.pid!)).not.toContain(token);
    // The same process serves its tools after the re-execution.
    const bearer = `Bearer ${readFileSync(tokenFile, 'utf8').trim()}`;
    const answer = await fetch(`http://127.0.0.1:${port}/tools/reachability/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: bearer }, body: '{}' });
    expect(answer.status, doctor.output()).toBe(200);
  });

  it('reads secrets from _FILE variables', async () => {
    const keyFile = join(bed.dir, 'key');
    const tokenFile = join(bed.dir, 'token');
    writeFileSync(keyFile, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    writeFileSync(tokenFile, `${TEST_WORKER_TOKEN}\n`, { mode: 0o600 });
    const server = await bed.server({ SVC_ENCRYPTION_KEY: '', SVC_ENCRYPTION_KEY_FILE: keyFile, SVC_WORKER_TOKEN: '', SVC_WORKER_TOKEN_FILE: tokenFile });
    const worker = spawnSvc(['worker'], { SVC_SERVER_URL: server.base, SVC_WORKER_TOKEN: '', SVC_WORKER_TOKEN_FILE: tokenFile });
    spawned.push(worker);
    await until('worker registered with the token from its file', () => /claiming from/.test(worker.output()), 20_000);
    expect(procText(worker.proc.pid!)).not.toContain(TEST_WORKER_TOKEN);
  });

  it('a _FILE that cannot be read stops the process with a message naming the variable', async () => {
    const worker = spawnSvc(['worker'], { SVC_WORKER_TOKEN: '', SVC_WORKER_TOKEN_FILE: join(bed.dir, 'missing') });
    spawned.push(worker);
    expect(await withTimeout(worker.exited, 20_000, 'worker exit')).toBe(78);
    expect(worker.output()).toMatch(/invalid SVC_WORKER_TOKEN_FILE: cannot read .*missing \(ENOENT\)/);
  });
});

describe('a worker started before its server', () => {
  it('waits, then registers once the server comes up, and runs work', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const worker = spawnSvc(['worker'], { SVC_SERVER_URL: base, SVC_WORKER_CONCURRENCY: '1', SVC_LOG_LEVEL: 'info' });
    spawned.push(worker);
    await new Promise((r) => setTimeout(r, 5_000));
    // Its start alone (Node, the sandbox probe) took over 6 s on a machine at load average 25.
    await until('worker waiting', () => /not reachable yet; waiting to register/.test(worker.output()), 20_000);
    expect(worker.proc.exitCode).toBeNull();

    await bed.server({}, port);
    await until('worker registered after the server came up', () => /claiming from/.test(worker.output()), 15_000);
    const pools: unknown = await (await fetch(`${base}/api/worker/pools`)).json();
    expect(JSON.stringify(pools)).toContain(`"pid":${worker.proc.pid}`);
  });

  it('SIGTERM while it waits stops it cleanly', async () => {
    const worker = spawnSvc(['worker'], { SVC_SERVER_URL: `http://127.0.0.1:${await freePort()}`, SVC_LOG_LEVEL: 'info' });
    spawned.push(worker);
    await until('worker waiting', () => /waiting to register/.test(worker.output()), 20_000);
    worker.kill('SIGTERM');
    expect(await withTimeout(worker.exited, 10_000, 'worker stop')).toBe(0);
  });
});
