import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { http, type Json } from './http.ts';
import { freePort } from './ports.ts';
import { spawnSvc, waitForHealth } from './process.ts';
import type { ServerProcesses } from './server-processes.ts';
import { until } from './until.ts';

/**
 * A `svc server` on `ps`'s database whose wall clock (`Date.now()` and `new Date()`) is `skewMs` off
 * the database's (another host, no NTP yet); its timers, on the monotonic clock, are not. Its base URL, once
 * healthy, and how to kill it (SIGKILL). `env`: more of its environment (traces' OTEL_*, say).
 */
export async function startSkewedServer(ps: ServerProcesses, skewMs: number, env: Record<string, string> = {}): Promise<{ base: string; kill(): void }> {
  const preload = join(ps.dir, `clock-${skewMs}.mjs`);
  await writeFile(
    preload,
    `const now = Date.now;
const skewed = () => now() + ${skewMs};
globalThis.Date = class extends Date {
  constructor(...args) { if (args.length === 0) super(skewed()); else super(...args); }
  static now() { return skewed(); }
};
`,
  );
  const port = await freePort();
  const server = spawnSvc(['server'], { SVC_DATABASE_URL: ps.database.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_PORT: String(port), SVC_HOST: '127.0.0.1', NODE_OPTIONS: `--import ${preload}`, ...env });
  const kill = () => server.kill('SIGKILL');
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(`${base}/api/health`, 30_000).catch((e: unknown) => {
    kill();
    throw new Error(`${String(e)}: ${server.output()}`);
  });
  return { base, kill };
}

/**
 * Registers `path` (one step `work`: a shell task sleeping 0.3 s) on the server at `base`, runs it
 * and waits until it completes (a worker must be there): its id and GET /api/executions/{id}.
 */
export async function runOneNap(base: string, path: string): Promise<{ id: number; execution: Json }> {
  const content = `apiVersion: svc/v1
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workflow:
  - step: work
    tool: { name: nap, kind: shell, command: "sleep 0.3" }
`;
  const reg = await http(base, 'POST', '/api/catalog/playbook', { content });
  expect([200, 201], JSON.stringify(reg.body)).toContain(reg.status);
  const started = await http(base, 'POST', '/api/run/playbook', { path });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const id = Number(started.body.execution_id);
  await until(`execution ${id} finished`, async () => (await http(base, 'GET', `/api/executions/${id}`)).body.status === 'completed', 40_000);
  return { id, execution: (await http(base, 'GET', `/api/executions/${id}`)).body };
}
