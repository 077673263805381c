import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startLossyProxy, type LossyProxy } from '../../helpers/lossy-proxy.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';

// svc run -> a proxy that can lose answers (or answer 503) -> a real server. Each start request's key is noted.
let app: TestApp;
let proxy: LossyProxy;
let dir: string;
const startKeys: (string | undefined)[] = [];
let loseNextStartAnswer = false;
let refuseNextStart = false;

beforeAll(async () => {
  app = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-run-idem-'));
  proxy = await startLossyProxy(app.url, (req) => {
    if (!(req.method === 'POST' && req.url === '/api/run/playbook')) return null;
    const key = req.headers['idempotency-key'];
    startKeys.push(typeof key === 'string' ? key : undefined);
    if (refuseNextStart) {
      refuseNextStart = false;
      return 'refuse';
    }
    if (loseNextStartAnswer) {
      loseNextStartAnswer = false;
      return 'lose';
    }
    return null;
  });
});
afterAll(async () => {
  await proxy?.close();
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function svcRun(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'run', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: proxy.url },
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
