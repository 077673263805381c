// POST /api/mcp/mcp/{server}/lifecycle/{action} took no Idempotency-Key, and `svc mcp deploy`
// sent its dispatch once: a dispatch whose answer was lost (the server had started the deploy)
// exited 3, and running it again deployed twice; the route, sent the same key twice, started two
// executions. The key now makes a repeat the same dispatch (the first's answer, Idempotent-Replayed),
// and svc mcp sends one key per invocation, again after a lost answer or a 503.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { startLossyProxy, type LossyProxy, type ProxyAct } from '../../helpers/lossy-proxy.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';

let t: TestApp;
let proxy: LossyProxy;
let next: ProxyAct = null;
const keys: (string | undefined)[] = [];
beforeAll(async () => {
  t = await startTestApp();
  for (const body of [
    { resource_type: 'playbook', content: 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: up, path: lcid/deploy }\nworkflow:\n  - step: start\n    wait: { signal: go }\n' },
    { resource_type: 'mcp', content: 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: lcid }\nendpoint: http://127.0.0.1:9/mcp\nlifecycle: { deploy: lcid/deploy }\n' },
  ]) expect((await http(t.url, 'POST', '/api/catalog/register', body)).status).toBe(201);
  proxy = await startLossyProxy(t.url, (req) => {
    if (!(req.method === 'POST' && req.url?.includes('/lifecycle/'))) return null;
    const key = req.headers['idempotency-key'];
    keys.push(typeof key === 'string' ? key : undefined);
    const act = next;
    next = null;
    return act;
  });
}, 30_000);
afterAll(async () => {
  await proxy?.close();
  await t?.close();
});

const deploys = async () => (await t.deps.db.query<{ execution_id: number }>(`SELECT execution_id FROM core.execution WHERE path = 'lcid/deploy' ORDER BY 1`)).rows.map((r) => r.execution_id);

function svcMcp(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'mcp', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: proxy.url }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += String(c)));
  proc.stderr.on('data', (c) => (stderr += String(c)));
  return new Promise((ok) => proc.on('close', (code) => ok({ code, stdout, stderr })));
}

describe('a lifecycle dispatch and Idempotency-Key', () => {
  it('the same key again is the same dispatch; another body with it is refused; another key starts another', async () => {
    const before = await deploys();
    const first = await http(t.url, 'POST', '/api/mcp/mcp/lcid/lifecycle/deploy', { payload: { region: 'eu' } }, { 'idempotency-key': 'deploy-1' });
    expect(first.status).toBe(202);
    const again = await http(t.url, 'POST', '/api/mcp/mcp/lcid/lifecycle/deploy', { payload: { region: 'eu' } }, { 'idempotency-key': 'deploy-1' });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await http(t.url, 'POST', '/api/mcp/mcp/lcid/lifecycle/deploy', { payload: { region: 'us' } }, { 'idempotency-key': 'deploy-1' });
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatchObject({ code: 'idempotency_key_reused' });
    expect(await deploys()).toEqual([...before, first.body.execution_id]);
    const second = await http(t.url, 'POST', '/api/mcp/mcp/lcid/lifecycle/deploy', {}, { 'idempotency-key': 'deploy-2' });
    expect(second.status).toBe(202);
    expect(await deploys()).toEqual([...before, first.body.execution_id, second.body.execution_id]);
  });

  it.each([['lose'], ['refuse']] as const)('svc mcp deploy whose first answer is %s: sent again with its key, one deploy', async (act) => {
    const before = await deploys();
    keys.length = 0;
    next = act;
    const r = await svcMcp(['deploy', 'lcid']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const added = (await deploys()).filter((id) => !before.includes(id));
    expect(added).toHaveLength(1);
    expect(r.stdout).toBe(`deploy of lcid started: execution ${added[0]}\n`);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });
});
