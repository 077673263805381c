// What scripts do with their standard streams, through a real `svc worker`, sandboxed (the
// default) and with SVC_SHELL_SANDBOX=off: `echo oops > /dev/stderr`, `tee /dev/stdout` and
// `cat /dev/stdin` open the streams again by path, which works only when they are pipes (the
// sockets spawn's 'pipe' makes answer "No such device or address"); the dup forms (`2>&1`, `>&2`,
// `exec 2>/dev/null`) keep working; each stream keeps its cap, the exit code, the timeout and the
// kill of what the command left behind are as before. What makes the pipes (and a root worker's
// task user's /etc files) leaves nothing on disk, even when the worker is killed.
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const OUTPUT_BYTES = 1024;

describe.each<{ mode: string; workerEnv: Record<string, string> }>([
  { mode: 'sandboxed', workerEnv: {} },
  { mode: 'unsandboxed', workerEnv: { SVC_SHELL_SANDBOX: 'off' } },
])('a $mode shell task of a real worker', ({ workerEnv }) => {
  let s: WorkerStack;
  beforeAll(async () => {
    s = await startWorkerStack({ workers: 1, concurrency: 2, workerEnv: { SVC_SHELL_OUTPUT_BYTES: String(OUTPUT_BYTES), ...workerEnv } });
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: stdio, path: stdio/run }
workflow:
  - step: start
    tool: { name: run, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, timeout_seconds: 60 }
`);
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: stdio-in, path: stdio/input }
workflow:
  - step: start
    tool: { name: run, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, stdin: "{{ workload.stdin }}", timeout_seconds: 60 }
`);
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: stdio-timeout, path: stdio/timeout }
workflow:
  - step: start
    tool: { name: run, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, timeout_seconds: 1 }
`);
  }, 120_000);
  afterAll(async () => s?.close());

  async function attempt(cmd: string, path = 'stdio/run', extra: Record<string, unknown> = {}): Promise<Json> {
    return s.wait(await s.run(path, { cmd, ...extra }), 60_000);
  }
  // What a failed task returned: its attempt's output (a failed execution has no result).
  async function failed(cmd: string, path = 'stdio/run'): Promise<{ error: Json; output: Json }> {
    const done = await attempt(cmd, path);
    expect(done.status).toBe('failed');
    const step = await http(s.url, 'GET', `/api/executions/${done.execution_id}/steps/start`);
    return { error: done.error, output: step.body.runs[0].tasks[0].attempts[0].output };
  }

  it('writes to /dev/stdout and /dev/stderr, and tees to them, each stream to its own', async () => {
    const done = await attempt('echo out > /dev/stdout; echo oops > /dev/stderr; echo both | tee /dev/stderr; printf x >> /dev/stdout');
    expect(done).toMatchObject({ status: 'completed', result: { exit_code: 0, stdout: 'out\nboth\nx', stderr: 'oops\nboth\n' } });
  });

  it('keeps 2>&1, >&2 and exec 2>/dev/null as they were', async () => {
    const done = await attempt('ls /no-such-path 2>&1 | grep -c no-such-path; echo to-err >&2; (exec 2>/dev/null; echo hidden >&2; echo shown); exec 2>&1; echo merged >&2');
    expect(done).toMatchObject({ status: 'completed', result: { stdout: '1\nshown\nmerged\n', stderr: 'to-err\n' } });
  });

  it('reads stdin as before, and as /dev/stdin (from its start); with no stdin, reads nothing', async () => {
    const given = await attempt('read -r first; echo "got $first"; cat; wc -l < /dev/stdin', 'stdio/input', { stdin: 'one\ntwo\nthree\n' });
    expect(given).toMatchObject({ status: 'completed', result: { stdout: 'got one\ntwo\nthree\n3\n', stderr: '' } });
    const none = await attempt('cat; cat /dev/stdin; read -r x || echo eof');
    expect(none).toMatchObject({ status: 'completed', result: { stdout: 'eof\n', stderr: '' } });
  });

  it('keeps the exit code and the cap of each stream written through /dev/stdout and /dev/stderr', async () => {
    const three = await failed(`echo partial > /dev/stdout; head -c ${OUTPUT_BYTES + 500} /dev/zero | tr '\\0' e > /dev/stderr; exit 3`);
    expect(three).toEqual({
      error: { code: 'exit_code', message: 'command exited with code 3', step: 'start' },
      output: { exit_code: 3, stdout: 'partial\n', stderr: `${'e'.repeat(OUTPUT_BYTES)}\n[truncated: 500 bytes omitted]` },
    });
  });

  it('ends with its command though a background process holds /dev/stdout open, and stops at the timeout', async () => {
    const started = Date.now();
    const done = await attempt('sleep 30 > /dev/stdout 2> /dev/stderr & echo done > /dev/stdout');
    expect(done).toMatchObject({ status: 'completed', result: { stdout: 'done\n' } });
    expect(Date.now() - started).toBeLessThan(10_000);
    const late = await failed('echo started > /dev/stderr; sleep 30', 'stdio/timeout');
    expect(late).toMatchObject({ error: { code: 'timeout' }, output: { exit_code: null, stdout: '', stderr: 'started\n' } });
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);
});

describe('the pipes of a killed worker', () => {
  let s: WorkerStack;
  let tmp: string;
  beforeAll(async () => {
    // The worker's temp directory: what it leaves there is what the test looks at. A root worker's
    // task users pass through it to their homes.
    tmp = await mkdtemp(join(tmpdir(), 'svc-stdio-tmp-'));
    await chmod(tmp, 0o755);
    s = await startWorkerStack({ workers: 1, workerEnv: { TMPDIR: tmp } });
  }, 120_000);
  afterAll(async () => {
    // The killed worker cannot drain; the stack's close would report it.
    s.workers.length = 0;
    await s?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it('leave nothing on disk, nor do its task user\'s /etc files', async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: once, path: stdio/once }
workflow:
  - step: start
    tool: { name: run, kind: shell, command: 'echo hi > /dev/stderr; whoami', stdin: 'in' }
`);
    const done = await s.wait(await s.run('stdio/once'), 60_000);
    expect(done, JSON.stringify(done.error)).toMatchObject({ status: 'completed', result: { stderr: 'hi\n' } });
    await s.workers[0].kill();
    expect(await readdir(tmp)).toEqual([]);
  });
});
