import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { renderShellCommand } from '../../../src/dsl/render.ts';
import { probeShellSandbox } from '../../../src/worker/tools/probe-shell-sandbox.ts';
import { runShell, shell } from '../../../src/worker/tools/shell.ts';
import type { ShellHost } from '../../../src/worker/tools/shell-argv.ts';
import { DEFAULT_SHELL_SETTINGS } from '../../../src/worker/tools/shell-settings.ts';
import { SHELL_KILL_GRACE_MS } from '../../../src/worker/tools/spawn-in-group.ts';
import { commandSuperseded } from '../../../src/worker/tools/outcome.ts';
import { processAlive } from '../../helpers/process-alive.ts';
import { until } from '../../helpers/until.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';

const SHELL_OUTPUT_LIMIT_BYTES = DEFAULT_SHELL_SETTINGS.outputBytes;

let dir: string;
// Tasks run sandboxed, as a worker runs them by default. The tests that watch the process group
// through host files (markers, pid files, a host cwd) run unsandboxed (SVC_SHELL_SANDBOX=off), as
// the sandbox hides the host from them; each has a sandboxed counterpart below that watches the
// host's process table instead.
let sandboxed: ShellHost;
let unsandboxed: ShellHost;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'svc-shell-test-')));
  sandboxed = await probeShellSandbox(DEFAULT_SHELL_SETTINGS);
  unsandboxed = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, sandbox: false });
  if (sandboxed.unavailable) throw new Error(sandboxed.unavailable);
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({ signal: new AbortController().signal, env: {}, shell: sandboxed, ...extra });
const off = (extra: Partial<ToolContext> = {}): ToolContext => ctx({ shell: unsandboxed, ...extra });

/** Host pids whose command line contains `marker` (a task's processes, seen from outside its sandbox). */
async function hostPids(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) pids.push(Number(entry));
  }
  return pids;
}
const task = (fields: Record<string, unknown>) => ({ name: 't', kind: 'shell', ...fields });

describe('shell tool', () => {
  it('captures stdout and stderr of a successful command', async () => {
    const outcome = await shell(task({ command: 'echo hello; echo oops >&2' }), ctx());
    expect(outcome).toEqual({ status: 'ok', data: { exit_code: 0, stdout: 'hello\n', stderr: 'oops\n' } });
  });

  it('reports a non-zero exit as an exit_code error with the output kept', async () => {
    const outcome = await shell(task({ command: 'echo partial; exit 3' }), ctx());
    expect(outcome).toEqual({
      status: 'error',
      data: { exit_code: 3, stdout: 'partial\n', stderr: '' },
      error: { code: 'exit_code', message: 'command exited with code 3' },
    });
  });

  it('merges env onto the worker environment and runs in cwd, with stdin', async () => {
    const outcome = await shell(
      task({ command: 'printf "%s|%s|%s|" "$GREETING" "$COUNT" "$PWD"; test -n "$PATH" && cat', env: { GREETING: 'hi there', COUNT: 3 }, cwd: dir, stdin: 'from stdin' }),
      off(),
    );
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: `hi there|3|${dir}|from stdin` } });
  });

  it('does not hang on a command that reads stdin when none is given', async () => {
    expect(await shell(task({ command: 'cat' }), ctx())).toMatchObject({ status: 'ok', data: { stdout: '' } });
  });

  it('caps each stream at the limit and notes how much was dropped', async () => {
    const extra = 12345;
    const outcome = await shell(task({ command: `head -c ${SHELL_OUTPUT_LIMIT_BYTES + extra} /dev/zero | tr '\\0' a; head -c 10 /dev/zero | tr '\\0' b >&2` }), ctx());
    expect(outcome.status).toBe('ok');
    const data = outcome.data;
    if (typeof data !== 'object' || data === null || !('stdout' in data) || typeof data.stdout !== 'string') throw new Error('no stdout');
    expect(data.stdout.endsWith(`\n[truncated: ${extra} bytes omitted]`)).toBe(true);
    expect(data.stdout.length).toBe(SHELL_OUTPUT_LIMIT_BYTES + `\n[truncated: ${extra} bytes omitted]`.length);
    expect(outcome).toMatchObject({ data: { stderr: 'bbbbbbbbbb' } });
  });

  it('kills the whole process group on abort and reports a timeout', async () => {
    const marker = join(dir, 'survivor');
    const started = Date.now();
    // The background child would write the marker after 1 s unless its group is killed.
    const outcome = await shell(task({ command: `(sleep 1; touch ${marker}) & echo started; sleep 30` }), off({ signal: AbortSignal.timeout(300) }));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout', message: 'task timed out' }, data: { stdout: 'started\n' } });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(existsSync(marker)).toBe(false);
  });

  it('stops at an abort that comes while the task is still being set up (its directory, its pipes)', async () => {
    for (const host of [sandboxed, unsandboxed]) {
      const abort = new AbortController();
      const started = Date.now();
      const outcome = runShell(host, { command: 'sleep 3; echo late', env: {} }, abort.signal);
      // runShell waits for its private directory now: the abort comes before anything runs.
      abort.abort(new DOMException('The operation timed out.', 'TimeoutError'));
      expect(await outcome).toMatchObject({ status: 'error', error: { code: 'timeout' }, data: { stdout: '' } });
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it('reports what a command did when it ended before an abort the worker had not yet taken in (a worker paused, then told its command was taken over)', async () => {
    // Read at once, never awaited: the event loop must not turn while it stands still below. (An
    // async scan of /proc under CI's load took longer than the command ran, and missed it.)
    const runningNow = (marker: string) =>
      readdirSync('/proc').some((entry) => {
        try {
          return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker);
        } catch {
          return false;
        }
      });
    const standStill = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    for (const host of [sandboxed, unsandboxed]) {
      const marker = `1.50${randomUUID().replace(/\D/g, '').slice(0, 8)}`;
      const abort = new AbortController();
      const outcome = runShell(host, { command: `sleep ${marker}; echo first`, env: {} }, abort.signal);
      await until('the command to start', () => runningNow(marker), 20_000, 5);
      // The event loop stands still (as a SIGSTOPped worker's does) while the command ends: its
      // exit and output are pending when the abort comes.
      for (const t0 = Date.now(); runningNow(marker) && Date.now() - t0 < 30_000; ) standStill(100);
      standStill(2_000); // the shell's echo and exit after its sleep
      abort.abort(commandSuperseded());
      expect(await outcome).toEqual({ status: 'ok', data: { exit_code: 0, stdout: 'first\n', stderr: '' } });
    }
  }, 90_000);

  it('on abort sends the group SIGTERM first, and SIGKILL after the grace period to what ignores it', async () => {
    const log = join(dir, 'term-log');
    const pids = join(dir, 'term-pids');
    const armed = join(dir, 'term-armed');
    // One child stops cleanly on SIGTERM (and says so); the other ignores it. Each says when its
    // trap is set: the abort comes then (a fixed delay lost the race on a loaded machine). `ready`
    // is written before the pids file the test waits for, so it is in the pipe when the abort comes.
    const begun = join(dir, 'term-begun');
    const command = `echo >> ${begun}; sleep 0.5; (trap 'echo got-term >> ${log}; exit 0' TERM; echo a >> ${armed}; sleep 30 & wait) & (trap '' TERM; echo b >> ${armed}; sleep 30) & echo ready; echo $! > ${pids}; wait`;
    const abort = new AbortController();
    const outcome = shell(task({ command }), off({ signal: abort.signal }));
    const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
    await until('the command begun', () => existsSync(begun), 10_000, 5);
    // Then waited for with the event loop standing still: `ready` is in the pipe, unread, when the
    // abort comes (as on a busy worker); what the command wrote before the abort is in its answer.
    const standStill = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    for (const t0 = Date.now(); !(lines(armed).length === 2 && lines(pids).length === 1) && Date.now() - t0 < 10_000; ) standStill(20);
    const abortedAt = Date.now();
    abort.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    expect(await outcome).toMatchObject({ status: 'error', error: { code: 'timeout' }, data: { stdout: 'ready\n' } });
    const stubborn = Number(lines(pids)[0]);
    await until('the first child stopped on SIGTERM', () => lines(log).length > 0, 3_000);
    expect(lines(log)).toEqual(['got-term']);
    // Within the grace period the child that ignores SIGTERM still runs; after it, it is killed.
    if (Date.now() - abortedAt < SHELL_KILL_GRACE_MS - 1_000) expect(processAlive(stubborn)).toBe(true);
    await until('the stubborn child killed', () => !processAlive(stubborn), SHELL_KILL_GRACE_MS + 5_000);
    expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(SHELL_KILL_GRACE_MS - 100);
  }, 30_000);

  it('ends with its command: what the command left running in the background is killed', async () => {
    const marker = join(dir, 'left-behind');
    const started = Date.now();
    // The first background job holds stdout open: without the kill the task would wait 30 s for it.
    const outcome = await shell(task({ command: `sleep 30 & (sleep 1; touch ${marker}) >/dev/null 2>&1 & echo done` }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: 'done\n' } });
    expect(Date.now() - started).toBeLessThan(3_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(marker)).toBe(false);
  });

  it('reports the signal that killed the command, as its own shell', async () => {
    expect(await shell(task({ command: 'kill -TERM $$' }), ctx())).toMatchObject({ status: 'error', error: { code: 'exit_code', message: 'command killed by signal SIGTERM' } });
  });

  it('reports a missing cwd and bad fields without throwing', async () => {
    expect(await shell(task({ command: 'true', cwd: join(dir, 'missing') }), ctx())).toMatchObject({ status: 'error', error: { code: 'spawn' } });
    expect(await shell(task({ command: '' }), ctx())).toMatchObject({ status: 'error', error: { code: 'invalid_task' } });
    expect(await shell(task({ command: 'true', env: { 'NOT-A-NAME': 'x' } }), ctx())).toMatchObject({ error: { code: 'invalid_task' } });
  });

  it('passes env values as text: lists and mappings as JSON, null leaves the variable unset', async () => {
    const outcome = await shell(
      task({ command: 'printf "%s|%s|%s|%s" "$OBJ" "$LIST" "$FLAG" "${GONE-unset}"', env: { OBJ: { a: [1, 'x'] }, LIST: ['a b', 2], FLAG: false, GONE: null } }),
      ctx({ env: { GONE: 'from the worker' } }),
    );
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: '{"a":[1,"x"]}|["a b",2]|false|unset' } });
  });

  it('refuses a NUL in the command, env or cwd without quoting the value', async () => {
    for (const fields of [{ command: 'echo a\0b' }, { command: 'true', env: { A: 'sec\0ret' } }, { command: 'true', cwd: '/tmp\0x' }]) {
      const outcome = await shell(task(fields), ctx());
      expect(outcome).toMatchObject({ status: 'error', error: { code: 'invalid_task' } });
      expect(outcome.error?.message).toMatch(/text without NUL characters/);
      expect(outcome.error?.message).not.toMatch(/sec|ret/);
    }
  });

  it('says why a value too large for a process environment cannot start the shell, without quoting it', async () => {
    const outcome = await shell(task({ command: 'echo ${#BIG}', env: { BIG: `secret${'x'.repeat(200_000)}` } }), ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'spawn', message: expect.stringMatching(/^cannot start the shell \(E2BIG\): its environment is too large: a variable .* holds at most 128 KiB/) } });
    expect(outcome.error?.message).not.toMatch(/secret/);
  });

  it("refuses env names of the sandbox's own (SVC_TASK_*): their values, data maybe, never run as commands", async () => {
    for (const env of [{ SVC_TASK_DEFERRED: '$(echo${IFS}injected>&2)' }, { SVC_TASK_OUTPUTS: 'x;echo${IFS}injected>&2' }, { SVC_TASK_COMMAND: 'echo injected' }]) {
      const outcome = await shell(task({ command: 'echo data', env }), ctx());
      expect(outcome).toMatchObject({ status: 'error', error: { code: 'invalid_task' } });
      expect(outcome.error?.message).toMatch(/a name not starting with SVC_TASK_/);
      expect(JSON.stringify(outcome)).not.toMatch(/injected/);
    }
  });
});

describe('shell environment', () => {
  it('does not pass the worker SVC_* settings to tasks', async () => {
    const out = await shell(
      { name: 't', kind: 'shell', command: 'echo "[$SVC_ENCRYPTION_KEY][$PATH_SEEN]"', env: { PATH_SEEN: 'yes' } },
      { signal: new AbortController().signal, env: { PATH: process.env.PATH, SVC_ENCRYPTION_KEY: 'super-secret-key' }, shell: sandboxed },
    );
    expect(out.status).toBe('ok');
    expect((out.data as { stdout: string }).stdout).toBe('[][yes]\n');
  });
});

describe('shell sandbox', () => {
  it('runs in a private home with only PATH, HOME, LANG, TMPDIR and the declared env', async () => {
    const outcome = await shell(task({ command: 'pwd; env | sort; echo x > f && ls', env: { GREETING: 'hi' } }), ctx({ env: { SECRET_OF_THE_WORKER: 'no' } }));
    expect(outcome).toMatchObject({ status: 'ok' });
    expect((outcome.data as { stdout: string }).stdout).toBe(
      ['/home/task', 'GREETING=hi', 'HOME=/home/task', 'LANG=C.UTF-8', `PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`, 'PWD=/home/task', 'TMPDIR=/tmp', 'f', ''].join('\n'),
    );
  });

  it('shows the task no host process, no host file outside the system dirs, and nothing writable but its home and /tmp', async () => {
    const command = `n=$(ls /proc | grep -c '^[0-9]'); [ "$n" -le 5 ] && echo few-processes; test -e ${dir} || echo no-dir; test -e /root || echo no-root; test -e /etc/shadow || echo no-shadow; touch /usr/x 2>/dev/null || echo ro-usr; touch /tmp/x && echo tmp-ok`;
    const outcome = await shell(task({ command }), ctx());
    // bwrap's init, the task's shells, ls and grep (grep may not have started when ls reads /proc):
    // the host's hundreds of processes are not there.
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: 'few-processes\nno-dir\nno-root\nno-shadow\nro-usr\ntmp-ok\n' } });
  });

  it('a relative cwd is inside the home; an absolute one inside the sandbox; a missing one is a spawn error', async () => {
    expect(await shell(task({ command: 'pwd', cwd: '/usr/bin' }), ctx())).toMatchObject({ status: 'ok', data: { stdout: '/usr/bin\n' } });
    expect(await shell(task({ command: 'pwd', cwd: '.' }), ctx())).toMatchObject({ status: 'ok', data: { stdout: '/home/task\n' } });
    expect(await shell(task({ command: 'pwd', cwd: 'sub' }), ctx())).toMatchObject({ status: 'error', error: { code: 'spawn', message: 'cannot start the shell in sub: no such directory in the sandbox' } });
  });

  it('sets loader variables only inside, right before the command', async () => {
    const outcome = await shell(task({ command: 'printf "%s|%s" "$LD_LIBRARY_PATH" "${SVC_TASK_COMMAND-unset}"', env: { LD_LIBRARY_PATH: '/nowhere' } }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: '/nowhere|unset' } });
  });

  it("keeps a command's template outputs to its own shell: it expands them, the programs it runs do not inherit them", async () => {
    const { command, env } = renderShellCommand("printf '%s|' {{ a }} \"{{ b }}\"; env | grep -c '^SVC_' ; sh -c 'printf %s \"${SVC_TEMPLATE_1-unset}\"'", { a: '$(id)', b: 'two\nlines' }, 't.command');
    const outcome = await shell(task({ command, env: { KEEP: 'yes', ...env } }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: '$(id)|two\nlines|0\nunset' } });
    expect(await shell(task({ command: 'printf %s "$KEEP"', env: { KEEP: 'yes', ...env } }), ctx())).toMatchObject({ status: 'ok', data: { stdout: 'yes' } });
  });

  it('kills a busy loop at the CPU limit with a resource_limit error', async () => {
    const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, cpuSeconds: 1 });
    const outcome = await shell(task({ command: 'while :; do :; done' }), ctx({ shell: host }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'resource_limit', message: 'CPU time limit (1 s) exceeded: command killed by signal SIGXCPU' } });
  });

  it('refuses a 2 GiB allocation and a file over the size limit', async () => {
    const alloc = await shell(task({ command: 'python3 -c "bytearray(2*1024**3)"' }), ctx());
    expect(alloc).toMatchObject({ status: 'error', error: { code: 'exit_code' } });
    expect(alloc.error?.message).toMatch(/exited with code 1; it may have hit a limit .*1024 MB of memory per process/);
    const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, fileMb: 1 });
    const big = await shell(task({ command: 'head -c 2M /dev/zero > big' }), ctx({ shell: host }));
    expect(big).toMatchObject({ status: 'error', error: { code: 'resource_limit', message: 'file size limit (1 MB) exceeded: command killed by signal SIGXFSZ' } });
  });

  it('writes nothing to the memory-backed root or /dev; /tmp and /dev/shm hold the file size limit, full is a clear error', async () => {
    const ro = await shell(task({ command: 'for p in /x /etc/x /home/x /dev/x; do (echo > $p) 2>/dev/null || echo "ro $p"; done; echo > /dev/null && echo null-ok' }), ctx());
    expect(ro).toMatchObject({ status: 'ok', data: { stdout: 'ro /x\nro /etc/x\nro /home/x\nro /dev/x\nnull-ok\n' } });
    const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, fileMb: 2 });
    // Files each under the size limit: only the file system's own bound stops them.
    for (const dir of ['/tmp', '/dev/shm']) {
      const full = await shell(task({ command: `for i in 1 2 3; do head -c 1M /dev/zero > ${dir}/f$i || exit 1; done` }), ctx({ shell: host }));
      expect(full).toMatchObject({ status: 'error', error: { code: 'exit_code', message: 'command exited with code 1; it may have filled /tmp or /dev/shm (at most 2 MB each in the sandbox)' } });
    }
  });

  it('makes no user namespace of its own, whose root could mount past the bounds', async () => {
    const outcome = await shell(task({ command: "unshare -rm sh -c 'mount -t tmpfs none /home/task && echo mounted' 2>/dev/null; unshare -r true 2>/dev/null || echo no-userns" }), ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { stdout: 'no-userns\n' } });
  });

  it('stops a fork bomb at the process limit', async () => {
    // 256 processes spinning take 13 to 18 s on two idle CPUs, past 20 s on a loaded machine.
    const outcome = await shell(task({ command: 'f(){ f|f; }; f' }), ctx({ signal: AbortSignal.timeout(75_000) }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'exit_code' } });
    expect(outcome.error?.message).toMatch(/it may have hit a limit \(at most 256 processes/);
  }, 90_000);

  it('kills what the command left in the background, and everything on abort', async () => {
    const marker = randomUUID().replace(/\D/g, '').slice(0, 8);
    const done = await shell(task({ command: `sleep 30.${marker} >/dev/null 2>&1 & echo done` }), ctx());
    expect(done).toMatchObject({ status: 'ok', data: { stdout: 'done\n' } });
    await until('the background sleep is gone', async () => (await hostPids(`30.${marker}`)).length === 0, 1_000, 20);
    const outcome = await shell(task({ command: `sleep 31.${marker} & echo started; sleep 32.${marker}` }), ctx({ signal: AbortSignal.timeout(300) }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout' }, data: { stdout: 'started\n' } });
    await until('the sleeps are gone', async () => (await hostPids(`.${marker}`)).length === 0, 1_000, 20);
  });

  it('in the sandbox, a process that left the group (setsid) ends with its task too (docs/playbook-dsl.md)', async () => {
    const marker = randomUUID().replace(/\D/g, '').slice(0, 8);
    const done = await shell(task({ command: `setsid sleep 33.${marker} >/dev/null 2>&1 < /dev/null & echo done` }), ctx());
    expect(done).toMatchObject({ status: 'ok', data: { stdout: 'done\n' } });
    await until('the setsid sleep is gone', async () => (await hostPids(`33.${marker}`)).length === 0, 1_000, 20);
  });

  it('on abort gives the sandboxed processes SIGTERM and the grace period, then SIGKILL', async () => {
    const marker = randomUUID().replace(/\D/g, '').slice(0, 8);
    // The task's shell outlives the SIGTERM (its trap), so the sandbox stands until the SIGKILL.
    const command = `trap : TERM; sleep 30.${marker}1 & (trap '' TERM; exec sleep 30.${marker}2) & sleep 0.2; echo ready; wait; wait`;
    // Aborted well after `ready` (the sandbox's start takes longer on a loaded machine: at 500 ms
    // it once had not printed it yet); what is timed below runs from the abort.
    const outcome = await shell(task({ command }), ctx({ signal: AbortSignal.timeout(2_000) }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout' }, data: { stdout: 'ready\n' } });
    await until('the sleep without a trap is gone', async () => (await hostPids(`30.${marker}1`)).length === 0, 1_000, 20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await hostPids(`30.${marker}2`)).length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, SHELL_KILL_GRACE_MS - 500));
    await until('the sleep that ignores SIGTERM is gone', async () => (await hostPids(`30.${marker}`)).length === 0, 2_000, 20);
  }, 15_000);

  it("has the host's network by default; with SVC_SHELL_NETWORK=external a namespace of its own, never this machine's loopback services; none with false", async () => {
    // A service of this machine on loopback, as the server's API and the service database are.
    const server = createServer((_, res) => res.end('the worker machine'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const command =
        `bash -c '(echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null' && echo reached-loopback || echo loopback-refused; ` +
        // A default route out: the network is there (a namespace of its own, not none at all).
        `awk '$2 == "00000000" { r = 1 } END { print r ? "default-route" : "no-route" }' /proc/net/route`;
      expect(await shell(task({ command }), ctx())).toMatchObject({ status: 'ok', data: { stdout: 'reached-loopback\ndefault-route\n' } });
      const external = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, network: 'external' });
      expect(external.unavailable).toBeUndefined();
      expect(await shell(task({ command }), ctx({ shell: external }))).toMatchObject({ status: 'ok', data: { stdout: 'loopback-refused\ndefault-route\n' } });
      const isolated = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, network: 'none' });
      expect(await shell(task({ command }), ctx({ shell: isolated }))).toMatchObject({ status: 'ok', data: { stdout: 'loopback-refused\nno-route\n' } });
    } finally {
      server.close();
    }
  });

  it('refuses shell tasks when the sandbox cannot run, never running them unsandboxed', async () => {
    const host: ShellHost = { ...sandboxed, bwrap: undefined, unavailable: 'shell tasks are refused: the sandbox cannot run (test)' };
    expect(await shell(task({ command: 'true' }), ctx({ shell: host }))).toMatchObject({ status: 'error', error: { code: 'sandbox_unavailable', message: host.unavailable } });
    expect(await shell(task({ command: 'true' }), ctx({ shell: undefined }))).toMatchObject({ status: 'error', error: { code: 'sandbox_unavailable' } });
  });
});
