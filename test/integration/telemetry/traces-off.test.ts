// Traces are off by default, and off costs nothing: a real `svc start` (server and in-process
// worker) without OTEL_* variables runs a playbook with an http task while a module hook records
// every module the process loads. No OpenTelemetry SDK package and none of the span-making modules
// are loaded, and the called service gets no `traceparent`.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_WORKER_TOKEN } from '../../helpers/auth.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { NODE24, ROOT, waitForHealth } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: untraced, path: traces/off }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "{{ workload.target }}/echo" }
`;

// Records the URL of every module the process resolves.
const HOOK = `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
const out = process.env.SVC_TEST_MODULE_LOG;
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); appendFileSync(out, r.url + '\\n'); return r; } });
`;

let dir: string;
let database: TestDatabase;
let target: HttpTarget;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-traces-off-'));
  database = await createTestDatabase();
  target = await startHttpTarget();
});

afterAll(async () => {
  await target?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('traces off (no OTEL_* variables)', () => {
  it('loads no OpenTelemetry SDK and no span code; the http target gets no traceparent', async () => {
    const hook = join(dir, 'hook.mjs');
    const modules = join(dir, 'modules.txt');
    await writeFile(hook, HOOK);
    await writeFile(modules, '');
    const proc = spawn(NODE24, ['--import', pathToFileURL(hook).href, `${ROOT}src/cli.ts`, 'start'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        SVC_TEST_MODULE_LOG: modules,
        SVC_DATABASE_URL: database.url,
        SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        SVC_DATA_DIR: join(dir, 'data'),
        SVC_PORT: '0',
        SVC_WORKER_CONCURRENCY: '1',
        SVC_WORKER_TOKEN: TEST_WORKER_TOKEN,
        SVC_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (c) => (out += String(c)));
    proc.stderr.on('data', (c) => (out += String(c)));
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    try {
      const url = await until('the API address', () => out.match(/API\s+(http:\/\/\S+)\/api/)?.[1], 60_000);
      await waitForHealth(`${url}/api/health`, 30_000);
      const api = executionApi(url);
      await api.register(PLAYBOOK);
      const id = await api.run('traces/off', { target: target.url });
      expect((await api.wait(id)).status).toBe('completed');
      expect(target.requests).toHaveLength(1);
      expect(target.requests[0].headers.traceparent).toBeUndefined();

      const loaded = (await readFile(modules, 'utf8')).split('\n').filter(Boolean);
      expect(loaded.length).toBeGreaterThan(100); // the hook saw the process load
      // No SDK, exporter or resource package (the API package is prom-client's, loaded with the metrics whatever traces are).
      expect(loaded.filter((u) => u.includes('/@opentelemetry/') && !u.includes('/@opentelemetry/api/'))).toEqual([]);
      // What off loads of src/telemetry: the switch, the ids, the worker's scope (a function that runs the command as it is).
      const telemetry = [...new Set(loaded.filter((u) => u.includes('/src/telemetry/')).map((u) => u.slice(u.indexOf('/src/telemetry/') + 1)))].sort();
      expect(telemetry).toEqual(['src/telemetry/command-trace.ts', 'src/telemetry/trace-ids.ts', 'src/telemetry/trace-switch.ts', 'src/telemetry/traces-configured.ts']);
    } finally {
      proc.kill('SIGTERM');
      await exited;
    }
  });
});
