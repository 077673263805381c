import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHELL_OUTPUT_LIMIT_BYTES, shell } from '../../../src/worker/tools/shell.ts';
import { SHELL_KILL_GRACE_MS } from '../../../src/worker/tools/spawn-in-group.ts';
import { processAlive } from '../../helpers/process-alive.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';

let dir: string;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'svc-shell-test-')));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({ signal: new AbortController().signal, env: {}, ...extra });
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
      ctx(),
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
    const outcome = await shell(task({ command: `(sleep 1; touch ${marker}) & echo started; sleep 30` }), ctx({ signal: AbortSignal.timeout(300) }));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout', message: 'task timed out' }, data: { stdout: 'started\n' } });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(existsSync(marker)).toBe(false);
  });

  it('on abort sends the group SIGTERM first, and SIGKILL after the grace period to what ignores it', async () => {
    const log = join(dir, 'term-log');
    const pids = join(dir, 'term-pids');
    // One child stops cleanly on SIGTERM (and says so); the other ignores it.
    const command = `(trap 'echo got-term >> ${log}; exit 0' TERM; sleep 30 & wait) & (trap '' TERM; sleep 30) & echo $! > ${pids}; sleep 0.2; echo ready; wait`;
    const outcome = await shell(task({ command }), ctx({ signal: AbortSignal.timeout(500) }));
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'timeout' }, data: { stdout: 'ready\n' } });
    const stubborn = Number(readFileSync(pids, 'utf8').trim());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(readFileSync(log, 'utf8')).toBe('got-term\n');
    expect(processAlive(stubborn)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, SHELL_KILL_GRACE_MS));
    expect(processAlive(stubborn)).toBe(false);
  }, 15_000);

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
});

describe('shell environment', () => {
  it('does not pass the worker SVC_* settings to tasks', async () => {
    const out = await shell(
      { name: 't', kind: 'shell', command: 'echo "[$SVC_ENCRYPTION_KEY][$PATH_SEEN]"', env: { PATH_SEEN: 'yes' } },
      { signal: new AbortController().signal, env: { PATH: process.env.PATH, SVC_ENCRYPTION_KEY: 'super-secret-key' } },
    );
    expect(out.status).toBe('ok');
    expect((out.data as { stdout: string }).stdout).toBe('[][yes]\n');
  });
});
