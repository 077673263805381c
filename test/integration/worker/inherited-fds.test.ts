// Tasks cannot read the worker's files (DESIGN.md, Security): a descriptor the worker's parent left
// open without close-on-exec (a supervisor's, a shell's `exec 40<file`, a harness' extra stdio) would
// stay open in every process the worker spawns, the sandbox's bwrap and the task included. Node
// marks fds 0 to 15 and those after them up to the first one not open close-on-exec at its start
// (libuv's uv_disable_stdio_inheritance), not one after a gap: fd 40 here. Real `svc worker` and
// `svc start` processes get a file holding a secret at fds 3, 9 and 40; their shell tasks try to
// read it by number and through /proc, and find none of them open.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { TEST_WORKER_TOKEN } from '../../helpers/auth.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { NODE24, ROOT, waitForHealth, withTimeout } from '../../helpers/process.ts';

const SECRET_FDS = [3, 9, 40];
const secret = `fd-secret-${randomBytes(12).toString('hex')}`;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-inherited-fds-'));
  await writeFile(join(dir, 'secret'), `${secret}\n`, { mode: 0o600 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * `svc <args>` with the secret file open at its fds 3, 9 and 40 (16 to 39 closed): spawn's stdio
 * entries are dup2'ed into place without close-on-exec, as a parent's leftover descriptors are.
 * `env` holds no secret variable, so the CLI does not re-execute itself (secret-environment.ts)
 * before it runs.
 */
function spawnWithSecretFds(args: string[], env: Record<string, string>) {
  // Its own open file (and offset): a read in one process must not leave the next one at the end.
  const secretFd = openSync(join(dir, 'secret'), 'r');
  const compileCache: Record<string, string> = process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {};
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...compileCache, SVC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: 38 }, (_, i) => (SECRET_FDS.includes(i + 3) ? secretFd : 'ignore'))],
  });
  closeSync(secretFd);
  let out = '';
  proc.stdout!.on('data', (c) => (out += String(c)));
  proc.stderr!.on('data', (c) => (out += String(c)));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return {
    output: () => out,
    async waitFor(text: string, timeoutMs: number) {
      const t0 = Date.now();
      while (!out.includes(text)) {
        if (proc.exitCode !== null) throw new Error(`svc ${args[0]} exited ${proc.exitCode}:\n${out}`);
        if (Date.now() - t0 > timeoutMs) throw new Error(`svc ${args[0]} did not print '${text}' within ${timeoutMs} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return withTimeout(exited, 30_000, `svc ${args[0]} stop`).catch(() => (proc.kill('SIGKILL'), null));
    },
  };
}

// `[ -e /proc/$$/fd/N ]` is the task's shell's own test: no process of its own, no redirection
// whose fds it would see. bash reads `<&40` (dash takes one digit).
const PROBE = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: fds, path: sandbox/inherited-fds }
workflow:
  - step: start
    tool:
      name: probe
      kind: shell
      command: 'for n in 3 9 40; do bash -c "cat <&$n"; cat /proc/self/fd/$n; if [ -e /proc/$$/fd/$n ]; then echo "fd $n: open"; else echo "fd $n: closed"; fi; done; ls -l /proc/self/fd /proc/$$/fd'
`;

/** Runs the probe at `url`: every text of its execution (status, result, events) and the fds open in the task's shell. */
async function probe(url: string) {
  const api = executionApi(url);
  await api.register(PROBE);
  const id = await api.run('sandbox/inherited-fds');
  const done = await api.wait(id, 60_000);
  const events = (await http(url, 'GET', `/api/events/${id}?limit=1000`)).body;
  const open = [...String(done.result?.stdout).matchAll(/^fd (\d+): (open|closed)$/gm)].map((m) => `${m[1]} ${m[2]}`);
  return { done, text: `${JSON.stringify(done)}\n${JSON.stringify(events)}`, open };
}

// The fds closed, by number only, in the one line that says how many: 40 among them (the test's
// own parent may have left more, after a gap).
const CLOSED_LINE = /"fds":\[(\d+,)*40(,\d+)*\][^\n]*"msg":"closed \d+ inherited file descriptors? without close-on-exec"/;

describe('descriptors a worker inherited without close-on-exec', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('never reach a task of `svc worker`: not by number, not through /proc', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-inherited-fds-worker-'));
    // The worker token from its data directory, not the environment (see spawnWithSecretFds).
    await writeFile(join(dataDir, 'worker.token'), TEST_WORKER_TOKEN, { mode: 0o600 });
    const worker = spawnWithSecretFds(['worker'], { SVC_SERVER_URL: app.url, SVC_DATA_DIR: dataDir, SVC_WORKER_CONCURRENCY: '1' });
    try {
      await worker.waitFor('claiming from', 20_000);
      const { done, text, open } = await probe(app.url);
      expect(done.status).toBe('completed');
      expect(text).not.toContain(secret);
      expect(open).toEqual(['3 closed', '9 closed', '40 closed']);
      expect(worker.output()).toMatch(CLOSED_LINE);
    } finally {
      expect(await worker.stop()).toBe(0);
      await rm(dataDir, { recursive: true, force: true });
    }
    expect(worker.output()).not.toContain(secret);
  }, 90_000);

  it('never reach a task of the in-process pool of `svc start`', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'svc-inherited-fds-data-'));
    // A root worker's task user must be able to reach the worker's temp directory (operations.md).
    await chmod(dataDir, 0o755);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // The embedded PostgreSQL: no database URL or key in the environment (see spawnWithSecretFds).
    const server = spawnWithSecretFds(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1', SVC_WORKER_CONCURRENCY: '1' });
    try {
      await waitForHealth(`${url}/api/health`, 60_000);
      await server.waitFor('Ctrl-C stops it.', 20_000);
      const { done, text, open } = await probe(url);
      expect(done.status).toBe('completed');
      expect(text).not.toContain(secret);
      expect(open).toEqual(['3 closed', '9 closed', '40 closed']);
      expect(server.output()).toMatch(CLOSED_LINE);
    } finally {
      expect(await server.stop()).toBe(0);
      await rm(dataDir, { recursive: true, force: true });
    }
    expect(server.output()).not.toContain(secret);
  }, 120_000);
});
