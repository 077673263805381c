// The sandbox shows a task the system directories (/usr, /lib, ...) and SVC_SHELL_SANDBOX_BINDS,
// read-only, and "nothing of the worker's files or the data directory" (docs/operations.md). A
// data directory (or a secret's _FILE) under one of them (a checkout in /usr/src/app or
// /usr/local/lib/node_modules with the default ./.svc, a bind of a directory that holds it) was
// shown all the same: a worker that is not root runs its tasks as its own user inside, so a task
// read worker.token, encryption.key and pg-password there. Here a real `svc worker`, as nobody,
// with its data directory and token file inside a bound directory.
import { spawn } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';
import { canRunAsNobody, NOBODY } from '../../helpers/shell-as-nobody.ts';
import { until } from '../../helpers/until.ts';

let app: TestApp;
let api: ExecutionApi;
let base: string;
let bound: string;
let dataDir: string;
let tokenFile: string;
let worker: ReturnType<typeof spawn> | undefined;
let output = '';
const encryptionKey = 'k'.repeat(44);

beforeAll(async () => {
  app = await startTestApp();
  api = executionApi(app.url);
  base = await mkdtemp(join(tmpdir(), 'svc-hidden-'));
  // What an operator binds for its tasks (a tools directory), holding the worker's own files too.
  bound = join(base, 'tools');
  dataDir = join(bound, '.svc');
  tokenFile = join(bound, 'secrets', 'worker-token');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await mkdir(join(bound, 'secrets'), { mode: 0o700 });
  await writeFile(join(dataDir, 'encryption.key'), encryptionKey, { mode: 0o600 });
  await writeFile(join(dataDir, 'worker.token'), app.workerToken, { mode: 0o600 });
  await writeFile(tokenFile, app.workerToken, { mode: 0o600 });
  await writeFile(join(bound, 'tool.sh'), 'echo tool-ran\n', { mode: 0o755 });
  for (const path of [base, bound, dataDir, join(bound, 'secrets'), join(dataDir, 'encryption.key'), join(dataDir, 'worker.token'), tokenFile, join(bound, 'tool.sh')]) await chown(path, NOBODY, NOBODY);
  await chmod(base, 0o755);
  if (!canRunAsNobody) return;
  worker = spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', NODE24, `${ROOT}src/cli.ts`, 'worker'], {
    cwd: '/',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: base,
      SVC_LOG_LEVEL: 'warn',
      SVC_SERVER_URL: app.url,
      SVC_WORKER_CONCURRENCY: '1',
      SVC_WORKER_TOKEN_FILE: tokenFile,
      SVC_DATA_DIR: dataDir,
      SVC_SHELL_SANDBOX_BINDS: bound,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout?.on('data', (c) => (output += String(c)));
  worker.stderr?.on('data', (c) => (output += String(c)));
  await until('the worker registered', () => /claiming from/.test(output), 30_000);
  await api.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: probe, path: sandbox/hidden }
workflow:
  - step: start
    tool: { name: try, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, timeout_seconds: 60 }
`);
}, 120_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((done) => worker?.once('exit', done));
    worker.kill('SIGTERM');
    await exited;
  }
  await app?.close();
  await rm(base, { recursive: true, force: true });
});

async function attempt(cmd: string) {
  const done = await api.wait(await api.run('sandbox/hidden', { cmd }), 60_000);
  return { done, text: JSON.stringify(done) };
}

describe.runIf(canRunAsNobody)('a data directory and secret files inside a path the sandbox binds', () => {
  it('are not there for a task; the rest of the bind is', async () => {
    const { done, text } = await attempt(`sh ${bound}/tool.sh; ls -A ${dataDir}; cat ${dataDir}/worker.token ${dataDir}/encryption.key ${tokenFile}; echo end`);
    expect(done.status, output).toBe('completed');
    // The data directory lists nothing (an empty directory covers it); the secrets read nothing.
    expect(done.result.stdout).toBe('tool-ran\nend\n');
    expect(text).not.toContain(app.workerToken);
    expect(text).not.toContain(encryptionKey);
  });

  it('nor can a task write there', async () => {
    const { done } = await attempt(`echo x > ${dataDir}/planted && echo wrote; echo x > ${tokenFile} && echo wrote-file; echo end`);
    expect(done.result.stdout).not.toMatch(/wrote/);
  });
});
