import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_WORKER_TOKEN } from './auth.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Node 24 from the `node` devDependency: it runs .ts directly, whatever node runs vitest.
export const NODE24 = `${ROOT}node_modules/.bin/node`;
// Passed into the clean environments below: a compile cache (.ci/run sets one) makes each process
// start on code compiled once, not again per process. It changes nothing but the time.
const COMPILE_CACHE: Record<string, string> = process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {};
/** Marks every long-running `svc` a test spawns with the run's id (global-setup.ts sets it), so the run's end can find any left running. */
export const TEST_RUN_VARIABLE = 'TEST_SVC_RUN';
const RUN_MARK: Record<string, string> = process.env[TEST_RUN_VARIABLE] ? { [TEST_RUN_VARIABLE]: process.env[TEST_RUN_VARIABLE] } : {};

export type SvcProcess = {
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
};

/**
 * Spawns `svc <args>` as a real process with the given environment (added to a clean one, which
 * has the test worker token: servers and workers of a test then agree; '' unsets it).
 */
export function spawnSvc(args: string[], env: Record<string, string>): SvcProcess {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...COMPILE_CACHE, ...RUN_MARK, SVC_LOG_LEVEL: 'warn', SVC_WORKER_TOKEN: TEST_WORKER_TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (c) => (out += String(c)));
  proc.stderr!.on('data', (c) => (out += String(c)));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return { proc, output: () => out, exited, kill: (s) => proc.kill(s) };
}

/**
 * Runs `svc <args>` to its end in a clean environment plus `env` (for client commands: `run`,
 * `events`); its exit code and its stdout and stderr apart.
 */
export function runSvc(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...COMPILE_CACHE, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (c) => (stdout += String(c)));
  proc.stderr!.on('data', (c) => (stderr += String(c)));
  return new Promise((ok) => proc.on('close', (code) => ok({ code, stdout, stderr })));
}

/** Polls GET url until it answers 200; returns the milliseconds it took. */
export async function waitForHealth(url: string, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return Date.now() - t0;
    } catch {
      // not up yet
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`${url} not healthy after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((_, fail) => (timer = setTimeout(() => fail(new Error(`${what} took over ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until the process has printed `text` (e.g. the start banner). */
export async function waitForOutput(p: SvcProcess, text: string, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!p.output().includes(text)) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`no "${text}" in output after ${timeoutMs} ms: ${p.output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
