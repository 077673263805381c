// `svc doctor …` as a real process, its stdout apart from its stderr (--json prints only the object).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, type Json } from '../../helpers/http.ts';
import { NODE24, ROOT, spawnSvc, waitForHealth, waitForOutput, withTimeout, type SvcProcess } from '../../helpers/process.ts';

export type StartedSvc = { url: string; proc: SvcProcess; db: TestDatabase; stop(): Promise<void> };

/**
 * `svc start` (server and its worker) on a new test database, with `env` added; on port 0, read
 * from its banner (a port picked beforehand may be taken meanwhile by another file's server).
 * `stop` ends it (SIGTERM) and drops the database.
 */
export async function startSvc(env: Record<string, string> = {}): Promise<StartedSvc> {
  const db = await createTestDatabase();
  const proc = spawnSvc(['start'], { SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_DATABASE_URL: db.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), ...env });
  const stop = async () => {
    proc.kill('SIGTERM');
    await withTimeout(proc.exited, 30_000, 'svc start stop');
    await db.drop();
  };
  try {
    await waitForOutput(proc, 'Ctrl-C stops it.', 60_000);
    const api = /API\s+(http:\/\/\S+)\/api/.exec(proc.output());
    if (!api) throw new Error(`no API address in the banner:\n${proc.output()}`);
    await waitForHealth(`${api[1]}/api/health`, 10_000);
    return { url: api[1], proc, db, stop };
  } catch (error) {
    proc.kill('SIGKILL');
    await db.drop();
    throw error;
  }
}

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

export type ServedDoctor = {
  url: string;
  proc: SvcProcess;
  /** The bearer the doctor wrote to its --token-file, and the file. */
  token: string;
  tokenFile: string;
  /** Its callers' Authorization header. */
  auth: Record<string, string>;
  /** `http` to the doctor with its bearer. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): ReturnType<typeof http>;
  stop(): Promise<void>;
};

/**
 * Starts `svc doctor serve --port 0` for `server`, its token file in a directory of its own, and
 * resolves with the address it printed and the token it wrote.
 */
export async function serveDoctor(server: string, extra: string[] = []): Promise<ServedDoctor> {
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'svc-doctor-serve-')), 'token');
  const proc = spawnSvc(['doctor', 'serve', '--port', '0', '--server', server, '--token-file', tokenFile, ...extra], {});
  try {
    await waitForOutput(proc, 'Ctrl-C stops it.', 60_000);
  } catch (error) {
    proc.kill('SIGKILL');
    throw error;
  }
  const url = /svc doctor serving (\S+)/.exec(proc.output())?.[1];
  if (!url) throw new Error(`no address in: ${proc.output()}`);
  const token = readFileSync(tokenFile, 'utf8').trim();
  const auth = { authorization: `Bearer ${token}` };
  return {
    url,
    proc,
    token,
    tokenFile,
    auth,
    call: (method, path, body, headers = {}) => http(url, method, path, body, { ...auth, ...headers }),
    async stop() {
      proc.kill('SIGTERM');
      await withTimeout(proc.exited, 10_000, 'svc doctor serve stop');
    },
  };
}
