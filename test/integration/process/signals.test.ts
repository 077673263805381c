import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { http } from '../../helpers/http.ts';
import { NODE24, ROOT, spawnSvc, waitForHealth, waitForOutput, withTimeout, type SvcProcess } from '../../helpers/process.ts';

// /api/health answers once the HTTP server listens; the in-process worker pool registers after it.
// A signal before that line is a stop during start, not a drain; both exit 0 when they go cleanly.
const STARTED_LINE = 'svc started';
import { until } from '../../helpers/until.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-signals-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as another user that must reach it
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** Pids of live processes whose command line mentions `text` (a data dir): none may outlive svc. */
async function processesMentioning(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(Number(entry));
  }
  return found;
}

/** Alive and not a zombie (an orphan that exited is reaped by init whenever init gets to it). */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat[stat.lastIndexOf(')') + 2] !== 'Z';
}


/** `svc start` as a terminal runs it: the leader of its own process group. */
function spawnInOwnGroup(env: Record<string, string>): SvcProcess {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'start'], {
    cwd: ROOT,
    detached: true,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (c) => (out += String(c)));
  proc.stderr.on('data', (c) => (out += String(c)));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return { proc, output: () => out, exited, kill: (s) => proc.kill(s) };
}

/** Whether a live process's command line (arguments joined by spaces) is `argv`. */
async function processRunning(argv: string): Promise<boolean> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').join(' ').trim() === argv) return true;
  }
  return false;
}

/**
 * Registers a one-step playbook running `command` in a shell, starts it, and waits until the
 * step runs, seen as a process of command line `running` (its events are reported only once it
 * ends); its execution id.
 */
async function startShellStep(base: string, path: string, command: string, running: string): Promise<number> {
  const content = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: s, path: ${path} }\nworkflow:\n  - step: start\n    tool: { name: s, kind: shell, command: ${JSON.stringify(command)} }\n`;
  expect((await http(base, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
  const id: number = (await http(base, 'POST', '/api/run/playbook', { path })).body.execution_id;
  await until('the step is running', () => processRunning(running), 30_000, 20);
  return id;
}

const SHUTDOWN_ERRORS = /shutting down|terminated unexpectedly|Connection terminated|ECONNREFUSED|"level":50/;

describe('signals while svc start is starting', () => {
  it('SIGINT once PostgreSQL runs: the start stops it and exits 0', async () => {
    const dataDir = join(dir, 'int');
    const p = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(await freePort()), SVC_HOST: '127.0.0.1' });
    const pidFile = join(dataDir, 'pg', 'postmaster.pid');
    let postmaster = 0;
    await until('postmaster.pid', async () => {
      postmaster = Number((await readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0]);
      return postmaster > 0;
    }, 60_000);
    p.kill('SIGINT');
    expect(await withTimeout(p.exited, 30_000, 'exit after SIGINT')).toBe(0);
    expect(p.output()).not.toContain('Ctrl-C stops it.'); // the signal did come during the start
    expect(await running(postmaster)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
    expect(await processesMentioning(dataDir)).toEqual([]);
  });

  it('SIGTERM while the data dir is initialised: no PostgreSQL is started, exit 0', async () => {
    const dataDir = join(dir, 'term');
    const p = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(await freePort()), SVC_HOST: '127.0.0.1' });
    await until('initdb at work', () => existsSync(join(dataDir, 'pg')), 60_000);
    p.kill('SIGTERM');
    expect(await withTimeout(p.exited, 30_000, 'exit after SIGTERM')).toBe(0);
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    expect(await processesMentioning(dataDir)).toEqual([]);
  });
});

// Points of a fresh start, each a milestone seen from outside and a delay after it. Migrations run
// right after svc.pid appears (PostgreSQL is ready): stopping PostgreSQL under them once crashed
// svc (an 'error' event of a pooled client with no listener, a stack trace, a stale svc.pid).
const START_POINTS: { after: 'spawn' | 'key file' | 'initdb' | 'postmaster' | 'svc.pid' | 'health'; ms: number }[] = [
  { after: 'spawn', ms: 150 },
  { after: 'key file', ms: 0 },
  { after: 'initdb', ms: 100 },
  { after: 'postmaster', ms: 0 },
  { after: 'svc.pid', ms: 0 },
  { after: 'svc.pid', ms: 30 },
  { after: 'svc.pid', ms: 60 },
  { after: 'svc.pid', ms: 100 },
  { after: 'svc.pid', ms: 200 },
  { after: 'health', ms: 0 },
];

describe('SIGINT at any point of a start', () => {
  it('exits 0 with no stack trace and leaves no svc.pid and no process behind, at ten points of a fresh start', async () => {
    for (const [i, point] of START_POINTS.entries()) {
      const dataDir = join(dir, `points-${i}`);
      const port = await freePort();
      const p = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' });
      const reached: Record<typeof point.after, () => boolean | Promise<boolean>> = {
        spawn: () => true,
        'key file': () => existsSync(join(dataDir, 'encryption.key')),
        initdb: () => existsSync(join(dataDir, 'pg')),
        postmaster: () => existsSync(join(dataDir, 'pg', 'postmaster.pid')),
        'svc.pid': () => existsSync(join(dataDir, 'svc.pid')),
        health: () => fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false),
      };
      await until(`${point.after} (try ${i})`, reached[point.after], 60_000, 5);
      await new Promise((r) => setTimeout(r, point.ms));
      p.kill('SIGINT');
      const code = await withTimeout(p.exited, 30_000, `exit after SIGINT (try ${i})`);
      const what = `try ${i}, ${point.ms} ms after ${point.after}: exit ${code}\n${p.output()}`;
      // A signal before svc has set up its handlers (while Node loads its code) ends it as
      // signals do; svc has done nothing by then.
      if (code === null) expect(existsSync(dataDir), what).toBe(false);
      else expect(code, what).toBe(0);
      expect(p.output(), what).not.toMatch(/^\s+at |Error|"level":50/m);
      expect(existsSync(join(dataDir, 'svc.pid')), what).toBe(false);
      expect(await processesMentioning(dataDir), what).toEqual([]);
    }
  }, 240_000);
});

describe('Ctrl-C in a terminal (SIGINT to the whole process group)', () => {
  it('drains the running step while PostgreSQL stays up, then stops it: no errors, nothing left running', async () => {
    const dataDir = join(dir, 'group');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' };
    const svc = spawnInOwnGroup(env);
    await waitForHealth(`${base}/api/health`, 60_000);
    const id = await startShellStep(base, 'signals/g', 'sleep 1.031; echo drained', 'sleep 1.031');

    const group = svc.proc.pid;
    if (group === undefined) throw new Error('no pid');
    process.kill(-group, 'SIGINT');
    expect(await withTimeout(svc.exited, 30_000, 'drain and stop')).toBe(0);
    expect(svc.output()).not.toMatch(SHUTDOWN_ERRORS);
    expect(await processesMentioning(dataDir)).toEqual([]);

    // The step that was running when Ctrl-C came finished and was recorded.
    const again = spawnSvc(['start'], env);
    try {
      await waitForHealth(`${base}/api/health`, 60_000);
      await waitForOutput(again, STARTED_LINE, 60_000);
      const execution = (await http(base, 'GET', `/api/executions/${id}`)).body;
      expect(execution.status).toBe('completed');
      expect(execution.result.stdout).toBe('drained\n');
    } finally {
      again.kill('SIGTERM');
      expect(await withTimeout(again.exited, 30_000, 'second stop')).toBe(0);
    }
    expect(await processesMentioning(dataDir)).toEqual([]);
  });
});

describe('a second signal during the drain', () => {
  it('exits at once with 130, leaves no svc.pid, and PostgreSQL stops by itself', async () => {
    const dataDir = join(dir, 'second');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const svc = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' });
    await waitForHealth(`${base}/api/health`, 60_000);
    await waitForOutput(svc, STARTED_LINE, 60_000);
    await startShellStep(base, 'signals/slow', 'sleep 20.031', 'sleep 20.031');
    svc.kill('SIGTERM'); // the drain waits for the 20 s step
    await waitForOutput(svc, 'SIGTERM: stopping', 10_000);
    svc.kill('SIGINT');
    expect(await withTimeout(svc.exited, 5_000, 'exit after the second signal')).toBe(130);
    expect(existsSync(join(dataDir, 'svc.pid'))).toBe(false);
    await until('PostgreSQL gone', async () => (await processesMentioning(dataDir)).length === 0, 30_000);
  });
});

describe('a PostgreSQL left behind', () => {
  it('is stopped by the next start when svc and its watchdog were killed outright', async () => {
    const dataDir = join(dir, 'leftover');
    const port = await freePort();
    const env = { SVC_DATA_DIR: dataDir, SVC_PORT: String(port), SVC_HOST: '127.0.0.1' };
    const first = spawnSvc(['start'], env);
    await waitForHealth(`http://127.0.0.1:${port}/api/health`, 60_000);
    const postmaster = Number((await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    // The watchdog shells first, then svc: either one dying closes the pipe the watchdog reads,
    // and it would stop PostgreSQL. The shell reading that pipe (a child of the other) goes first.
    const shells: { pid: number; parent: number }[] = [];
    for (const pid of await processesMentioning(dataDir)) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (cmdline.startsWith('/bin/sh')) shells.push({ pid, parent });
    }
    expect(shells).toHaveLength(2);
    shells.sort((a, b) => Number(shells.some((s) => s.pid === b.parent)) - Number(shells.some((s) => s.pid === a.parent)));
    for (const { pid } of shells) process.kill(pid, 'SIGKILL');
    first.kill('SIGKILL');
    await first.exited;
    await new Promise((r) => setTimeout(r, 200));
    expect(await running(postmaster)).toBe(true); // orphaned, still holding the data dir

    const second = spawnSvc(['start'], env);
    await waitForHealth(`http://127.0.0.1:${port}/api/health`, 60_000);
    await waitForOutput(second, STARTED_LINE, 60_000);
    expect(await running(postmaster)).toBe(false);
    second.kill('SIGTERM');
    expect(await withTimeout(second.exited, 30_000, 'stop')).toBe(0);
    expect(await processesMentioning(dataDir)).toEqual([]);
  });
});

describe('an invalid encryption key', () => {
  it('stops svc start at once with exit 78 and one line naming the variable, before anything is written', async () => {
    const dataDir = join(dir, 'badkey');
    const p = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_ENCRYPTION_KEY: 'abc', SVC_PORT: String(await freePort()) });
    expect(await withTimeout(p.exited, 20_000, 'exit')).toBe(78);
    expect(p.output().trim().split('\n')).toEqual([expect.stringMatching(/^svc start: invalid SVC_ENCRYPTION_KEY: expects base64 of exactly 32 bytes/)]);
    expect(p.output()).not.toContain('abc');
    expect(existsSync(dataDir)).toBe(false);
  });
});
