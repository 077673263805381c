// `svc doctor …` as a real process, its stdout apart from its stderr (--json prints only the object).
import { spawn } from 'node:child_process';
import type { Json } from '../../helpers/http.ts';
import { NODE24, ROOT, spawnSvc, waitForOutput, withTimeout, type SvcProcess } from '../../helpers/process.ts';

export type DoctorRun = { code: number | null; stdout: string; stderr: string; json(): Json };

/** Runs `svc doctor <args>` to its end (a clean environment plus `env`). */
export async function runDoctor(args: string[], env: Record<string, string> = {}, timeoutMs = 90_000): Promise<DoctorRun> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'doctor', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += String(c)));
  proc.stderr.on('data', (c) => (stderr += String(c)));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  let code: number | null;
  try {
    code = await withTimeout(exited, timeoutMs, `svc doctor ${args.join(' ')}`);
  } catch (error) {
    proc.kill('SIGKILL');
    throw error;
  }
  // The streams may still hold the last chunks after 'exit'.
  await new Promise((r) => setImmediate(r));
  return {
    code,
    stdout,
    stderr,
    json: () => {
      try {
        return JSON.parse(stdout);
      } catch {
        throw new Error(`svc doctor ${args.join(' ')} printed no JSON (exit ${code}):\n${stdout}\n${stderr}`);
      }
    },
  };
}

export type ServedDoctor = { url: string; proc: SvcProcess; stop(): Promise<void> };

/** Starts `svc doctor serve --port 0` for `server` and resolves with the address it printed. */
export async function serveDoctor(server: string, extra: string[] = []): Promise<ServedDoctor> {
  const proc = spawnSvc(['doctor', 'serve', '--port', '0', '--server', server, ...extra], {});
  try {
    await waitForOutput(proc, 'Ctrl-C stops it.', 20_000);
  } catch (error) {
    proc.kill('SIGKILL');
    throw error;
  }
  const url = /svc doctor serving (\S+)/.exec(proc.output())?.[1];
  if (!url) throw new Error(`no address in: ${proc.output()}`);
  return {
    url,
    proc,
    async stop() {
      proc.kill('SIGTERM');
      await withTimeout(proc.exited, 10_000, 'svc doctor serve stop');
    },
  };
}
