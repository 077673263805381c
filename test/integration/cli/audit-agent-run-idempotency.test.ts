// svc agent run started its agent with a POST /api/execute that carried no Idempotency-Key and was
// sent once: a start whose answer was lost (the server started the agent, its tools/call on the
// way) exited 3 'server unreachable', and running it again ran the call twice; a 503 (the database
// briefly away) failed the command where svc run sends its start again. It now sends one key per
// invocation and sends again as svc run does (docs/agents.md, The CLI). A real server behind a
// proxy that can lose an answer or answer 503; no worker, so nothing runs the agent.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { startLossyProxy, type LossyProxy, type ProxyAct } from '../../helpers/lossy-proxy.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';

let app: TestApp;
let proxy: LossyProxy;
const startKeys: (string | undefined)[] = [];
let next: ProxyAct = null;

beforeAll(async () => {
  app = await startTestApp();
  const agent = readFileSync(new URL('../../../examples/agents/mcp-agent.yaml', import.meta.url), 'utf8');
  expect((await http(app.url, 'POST', '/api/catalog/register', { content: agent, resource_type: 'agent' })).status).toBe(201);
  proxy = await startLossyProxy(app.url, (req) => {
    if (!(req.method === 'POST' && req.url === '/api/execute')) return null;
    const key = req.headers['idempotency-key'];
    startKeys.push(typeof key === 'string' ? key : undefined);
    const act = next;
    next = null;
    return act;
  });
}, 30_000);
afterAll(async () => {
  await proxy?.close();
  await app?.close();
});

function svcAgentRun(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'agent', 'run', 'agents/mcp', '--tool', 'add', '--arg', 'a=1', '--arg', 'b=2'], {
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

async function executions(): Promise<number[]> {
  const { rows } = await app.deps.db.query<{ execution_id: number }>("SELECT execution_id FROM core.execution WHERE path = 'agents/mcp' ORDER BY 1");
  return rows.map((r) => r.execution_id);
}

describe('svc agent run and Idempotency-Key', () => {
  it('a start whose answer was lost is sent again with the same key: one execution, reported', async () => {
    startKeys.length = 0;
    next = 'lose';
    const r = await svcAgentRun();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const ids = await executions();
    expect(ids).toHaveLength(1);
    expect(r.stdout).toBe(`execution ${ids[0]} started (agent agents/mcp)\n`);
    expect(startKeys).toHaveLength(2);
    expect(new Set(startKeys).size).toBe(1);
    expect(startKeys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a start answered 503 is sent again with the same key; each invocation has its own', async () => {
    startKeys.length = 0;
    next = 'refuse';
    expect((await svcAgentRun()).code).toBe(0);
    expect(startKeys).toHaveLength(2);
    expect(new Set(startKeys).size).toBe(1);
    expect((await svcAgentRun()).code).toBe(0);
    expect(new Set(startKeys).size).toBe(2);
    expect(await executions()).toHaveLength(3);
  });
});
