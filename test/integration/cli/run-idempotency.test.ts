import { spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';

// svc run -> a proxy that can lose answers -> a real server. Each start request's key is noted.
let app: TestApp;
let proxy: Server;
let proxyUrl: string;
let dir: string;
const startKeys: (string | undefined)[] = [];
let loseNextStartAnswer = false;
let refuseNextStart = false;

beforeAll(async () => {
  app = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-run-idem-'));
  const upstream = new URL(app.url);
  proxy = createServer((req, res) => {
    const isStart = req.method === 'POST' && req.url === '/api/run/playbook';
    const key = req.headers['idempotency-key'];
    if (isStart) startKeys.push(typeof key === 'string' ? key : undefined);
    if (isStart && refuseNextStart) {
      refuseNextStart = false;
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"detail":"database unavailable"}');
      return;
    }
    const lose = isStart && loseNextStartAnswer;
    if (lose) loseNextStartAnswer = false;
    const out = request({ hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      if (lose) {
        // The server has started it and answered; the client never hears of it.
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  const address = proxy.address();
  proxyUrl = `http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((ok) => proxy?.close(ok));
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function svcRun(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'run', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: proxyUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += String(c)));
  proc.stderr.on('data', (c) => (stderr += String(c)));
  return new Promise((ok) => proc.on('close', (code) => ok({ code, stdout, stderr })));
}

async function executionsOf(path: string): Promise<number[]> {
  const { rows } = await app.deps.db.query<{ execution_id: number }>('SELECT execution_id FROM core.execution WHERE path = $1 ORDER BY 1', [path]);
  return rows.map((r) => r.execution_id);
}

describe('svc run and Idempotency-Key', () => {
  it('a start whose answer was lost is sent again with the same key: one execution, and svc run reports it', async () => {
    const file = join(dir, 'lost.yaml');
    await writeFile(file, 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: lost, path: cli/lost }\nworkflow:\n  - step: start\n    tool: { name: n, kind: noop }\n');
    startKeys.length = 0;
    loseNextStartAnswer = true;
    const r = await svcRun([file]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const ids = await executionsOf('cli/lost');
    expect(ids).toHaveLength(1);
    expect(r.stdout).toContain(`execution ${ids[0]} started`);
    expect(startKeys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(startKeys).size).toBe(1);
    expect(startKeys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a start refused with 503 is sent again, with the same key', async () => {
    startKeys.length = 0;
    refuseNextStart = true;
    const r = await svcRun(['cli/lost']);
    expect(r.code).toBe(0);
    expect(startKeys).toHaveLength(2);
    expect(new Set(startKeys).size).toBe(1);
    expect(await executionsOf('cli/lost')).toHaveLength(2);
  });

  it('each invocation is its own start, with its own key', async () => {
    startKeys.length = 0;
    expect((await svcRun(['cli/lost'])).code).toBe(0);
    expect((await svcRun(['cli/lost'])).code).toBe(0);
    expect(await executionsOf('cli/lost')).toHaveLength(4);
    expect(new Set(startKeys).size).toBe(2);
  });
});
