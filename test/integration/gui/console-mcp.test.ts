// The agents terminal's MCP server table in a real browser, against GET /api/mcp/servers and the
// shipped lifecycle playbooks (examples/mcp/local-*.yaml) run by a real `svc worker`: the demo
// server listed with its status, deployed and undeployed from the GUI, each outcome shown.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { processAlive } from '../../helpers/process-alive.ts';
import { ROOT } from '../../helpers/process.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
let browser: Browser;
let stateDir: string;
const pidOf = async () => Number((await readFile(join(stateDir, 'pid'), 'utf8')).trim());

beforeAll(async () => {
  ensureGuiBuilt();
  // The demo server outlives its deploy task: a sandboxed task's processes die with it, so the
  // worker runs with SVC_SHELL_SANDBOX=off, as examples/mcp/local-deploy.yaml says such deployments need.
  stack = await startWorkerStack({ workerEnv: { SVC_SHELL_SANDBOX: 'off' } });
  stateDir = await mkdtemp(join(tmpdir(), 'svc-gui-mcp-'));
  const port = await freePort();
  for (const file of ['local-deploy', 'local-undeploy', 'local-status']) {
    await stack.register(await readFile(join(ROOT, 'examples/mcp', `${file}.yaml`), 'utf8'));
  }
  // The shipped document, pointed at a free port, a temporary state directory and the script's absolute path.
  const doc = load(await readFile(join(ROOT, 'examples/mcp/demo.mcp.yaml'), 'utf8')) as Record<string, unknown>;
  doc.endpoint = `http://127.0.0.1:${port}/mcp`;
  doc.config = { script: join(ROOT, 'examples/mcp/demo-server.mjs'), port, state_dir: stateDir };
  const r = await http(stack.url, 'POST', '/api/catalog/register', { content: dump(doc), resource_type: 'mcp' });
  expect(r.status, JSON.stringify(r.body) + stack.logs.filter((l) => l.includes("error")).join("\n")).toBe(201);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  const pid = await pidOf().catch(() => 0);
  if (pid && processAlive(pid)) process.kill(pid, 'SIGKILL');
  await stack?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('agents terminal: MCP servers', () => {
  it('lists the demo server with its status and deploys and undeploys it from the GUI', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${stack.url}/ui/#/agents`);
    const row = page.locator('table[aria-label="MCP servers"] tr[data-server="demo"]');
    await row.locator('.badge', { hasText: 'registered' }).waitFor();
    expect(await row.textContent()).toMatch(/http:\/\/127\.0\.0\.1:\d+\/mcp/);
    expect(await row.getByRole('button').allTextContents()).toEqual(['deploy', 'undeploy', 'status']);

    await row.getByRole('button', { name: 'deploy', exact: true }).click();
    await row.locator('.badge', { hasText: 'running' }).waitFor({ timeout: 90_000 });
    const deployLink = row.getByRole('link', { name: /^deploy \(execution \d+\)$/ });
    await deployLink.waitFor();
    const pid = await pidOf();
    expect(processAlive(pid)).toBe(true);
    const server = await http(stack.url, 'GET', '/api/mcp/servers/demo');
    expect(await deployLink.getAttribute('href')).toBe(`#/executions/${server.body.last_execution_id}`);

    await row.getByRole('button', { name: 'undeploy' }).click();
    await row.locator('.badge', { hasText: 'stopped' }).waitFor({ timeout: 60_000 });
    await row.getByRole('link', { name: /^undeploy \(execution \d+\)$/ }).waitFor();
    expect((await http(stack.url, 'GET', '/api/mcp/servers/demo')).body.status).toBe('stopped');

    // A failed check shows as the server answers it: unreachable.
    await row.getByRole('button', { name: 'status' }).click();
    await row.locator('.badge', { hasText: 'unreachable' }).waitFor({ timeout: 60_000 });
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});
