// An OTLP endpoint with a login (OTEL_EXPORTER_OTLP_ENDPOINT=http://user:password@host, sent as
// Basic auth) is a secret like the exporter's headers: `svc server`, `svc worker` and `svc start`
// given one keep it out of /proc/<pid>/environ (theirs and their embedded PostgreSQL's), still
// export with the login, and a worker still sends `traceparent` on its http tasks; given as
// ..._ENDPOINT_FILE, the server and the worker both read the file, so they agree that traces are on.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { spawnSvc, waitForHealth, waitForOutput, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const PASSWORD = 's3cret-otlp-9d41b7';
const BASIC = `Basic ${Buffer.from(`collector:${PASSWORD}`).toString('base64')}`;
const PLAYBOOK = `apiVersion: svc/v1
metadata: { name: called, path: otlp/called }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "{{ workload.target }}/echo" }
`;
const TRACES = { OTEL_BSP_SCHEDULE_DELAY: '20', SVC_TRACE_SALT: 'otlp-endpoint-secret' };

let bed: ServerProcesses;
let receiver: OtlpReceiver;
let target: HttpTarget;
let dir: string;
const spawned: SvcProcess[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  target = await startHttpTarget();
  bed = await ServerProcesses.open({});
  dir = await mkdtemp(join(tmpdir(), 'svc-otlp-endpoint-'));
  // The embedded PostgreSQL of a root `svc start` runs as another user: it must enter the directory.
  await chmod(dir, 0o755);
});
afterEach(async () => {
  for (const p of spawned.splice(0)) {
    if (p.proc.exitCode === null && p.proc.signalCode === null) p.kill('SIGTERM');
    await withTimeout(p.exited, 30_000, 'svc stop').catch(() => p.kill('SIGKILL'));
  }
  await bed.stopAll();
});
afterAll(async () => {
  await bed?.close();
  await receiver?.close();
  await target?.close();
  await rm(dir, { recursive: true, force: true });
});

const endpoint = () => `http://collector:${PASSWORD}@${receiver.url.slice('http://'.length)}`;

/** `pid` and every process below it, as /proc lists them. */
function withDescendants(pid: number): number[] {
  const out = [pid];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const child of children ? children.split(' ') : []) out.push(...withDescendants(Number(child)));
  }
  return out;
}

/** The environment and command line the kernel shows for `pid`, as text ('' once it is gone). */
function procText(pid: number): string {
  try {
    return ['environ', 'cmdline'].map((f) => readFileSync(`/proc/${pid}/${f}`, 'utf8')).join('\n');
  } catch {
    return '';
  }
}

/** Runs the playbook on `base`; resolves with the traceparent its http task sent. */
async function callThrough(base: string): Promise<string | undefined> {
  const api = executionApi(base);
  await api.register(PLAYBOOK);
  const before = target.requests.length;
  const id = await api.run('otlp/called', { target: target.url });
  expect((await api.wait(id)).status).toBe('completed');
  const sent = target.requests.slice(before).find((r) => r.path === '/echo')?.headers.traceparent;
  return typeof sent === 'string' ? sent : undefined;
}

/** Resolves once spans of `traceparent`'s trace reached the receiver; returns the headers of their exports. */
async function exportsOf(traceparent: string): Promise<string[]> {
  const traceId = traceparent.split('-')[1];
  await until('the trace exported', () => receiver.spans.some((s) => s.traceId === traceId), 20_000);
  return receiver.headers.map((h) => String(h.authorization));
}

describe('an OTLP endpoint with a login', () => {
  it('given in the environment: server and worker export with it, trace the http task, and hold it in none of their environments', async () => {
    const server = await bed.server({ ...TRACES, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint() });
    const worker = await bed.worker(server.base, 1, { ...TRACES, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint() });

    const traceparent = await callThrough(server.base);
    expect(traceparent, 'the worker sent no traceparent').toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(await exportsOf(traceparent!)).toContain(BASIC);
    for (const pid of [server.proc.proc.pid!, worker.pid]) expect(procText(pid), `process ${pid}`).not.toContain(PASSWORD);
  });

  it('given as ..._ENDPOINT_FILE: the server exports with it and the worker, reading the same file, traces the http task', async () => {
    const file = join(dir, 'traces-endpoint');
    await writeFile(file, `${endpoint()}/v1/traces\n`, { mode: 0o600 });
    const server = await bed.server({ ...TRACES, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT_FILE: file });
    const worker = await bed.worker(server.base, 1, { ...TRACES, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT_FILE: file });

    const traceparent = await callThrough(server.base);
    expect(traceparent, 'the worker sent no traceparent').toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(await exportsOf(traceparent!)).toContain(BASIC);
    for (const pid of [server.proc.proc.pid!, worker.pid]) expect(procText(pid), `process ${pid}`).not.toContain(PASSWORD);
  });

  it('`svc start` (embedded PostgreSQL, in-process workers) holds it in no process of its tree', async () => {
    const dataDir = await mkdtemp(join(dir, 'data-'));
    const p = spawnSvc(['start'], { ...TRACES, SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_WORKER_CONCURRENCY: '1', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint() });
    spawned.push(p);
    await Promise.race([waitForOutput(p, 'Ctrl-C stops it.', 90_000), p.exited.then((code) => Promise.reject(new Error(`svc exited ${code}: ${p.output()}`)))]);
    const base = /API\s+(\S+)\/api/.exec(p.output())?.[1];
    expect(base, p.output()).toBeDefined();
    await waitForHealth(`${base}/api/health`, 10_000);

    const traceparent = await callThrough(base!);
    expect(traceparent, 'the in-process worker sent no traceparent').toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(await exportsOf(traceparent!)).toContain(BASIC);
    const tree = withDescendants(p.proc.pid!);
    expect(tree.length, 'svc start and its PostgreSQL').toBeGreaterThan(1);
    for (const pid of tree) expect(procText(pid), `process ${pid}`).not.toContain(PASSWORD);
  });
});
