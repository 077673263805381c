import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Worker } from '../src/worker/worker.ts';
import { peakRssOfPid } from './memory.ts';

const REPO_ROOT = join(import.meta.dirname, '..');
const WORKER_READY_TIMEOUT_MS = 15_000;

/** Round-trip times (ms) of a worker's calls to its server, by path without query, as the worker sees them. */
export class RequestTimer {
  readonly byPath = new Map<string, number[]>();
  recording = false;

  /** Wraps an in-process worker's client so each request, and each report (in process: no request), is timed while `recording`. */
  attach(worker: Worker): void {
    const client = worker.client;
    const request = client.request.bind(client);
    const report = client.report.bind(client);
    client.request = async <T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> => {
      const t0 = performance.now();
      try {
        return await request<T>(method, path, body, signal);
      } finally {
        // A report is timed once, by its own wrapper below (over HTTP it is also a request).
        if (path !== REPORT_PATH) this.#add(`${method} ${path.split('?')[0]}`, t0);
      }
    };
    client.report = async (body, resendBody) => {
      const t0 = performance.now();
      try {
        return await report(body, resendBody);
      } finally {
        this.#add(`POST ${REPORT_PATH}`, t0);
      }
    };
  }

  #add(key: string, t0: number): void {
    if (!this.recording) return;
    const list = this.byPath.get(key) ?? [];
    list.push(performance.now() - t0);
    this.byPath.set(key, list);
  }
}

const REPORT_PATH = '/api/worker/report';

export type ProcessWorker = { pid: number; stop(): Promise<{ peakRssMiB: number | null }> };

/** `node src/cli.ts worker --server URL --concurrency N` (with the server's worker token) as a child process; resolves once it claims. */
export async function startProcessWorker(serverUrl: string, workerToken: string, concurrency: number): Promise<ProcessWorker> {
  const child: ChildProcess = spawn(process.execPath, ['src/cli.ts', 'worker', '--server', serverUrl, '--concurrency', String(concurrency)], {
    cwd: REPO_ROOT,
    env: { ...process.env, SVC_LOG_LEVEL: 'warn', SVC_WORKER_TOKEN: workerToken },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`worker process not ready after ${WORKER_READY_TIMEOUT_MS} ms: ${stderr}`)), WORKER_READY_TIMEOUT_MS);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('claiming from')) {
        clearTimeout(timer);
        ok();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`worker process exited with ${code}: ${stderr}`));
    });
  });
  const pid = child.pid!;
  return {
    pid,
    async stop() {
      const peakRssMiB = await peakRssOfPid(pid);
      const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
      child.kill('SIGTERM'); // drains: no new claims, deregisters, exits
      await exited;
      return { peakRssMiB };
    },
  };
}
