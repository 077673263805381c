// The agents terminal in a real browser: agents listed by workspace (hidden ones not), a tool run
// against a real MCP server through a real worker, its result shown as it arrives.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt, screenshotPath } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
let mcp: TestMcpServer;
let browser: Browser;
beforeAll(async () => {
  ensureGuiBuilt();
  mcp = await startMcpServer();
  stack = await startTestStack({ workers: 1 });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await mcp?.close();
});

const agent = (path: string, terminal: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.split('/').at(-1)}, path: ${path}, agent: true, terminal: ${terminal} }
workload: { tool: echo, arguments: { text: "" } }
workflow:
  - step: start
    tool:
      - { name: call, kind: mcp, server: test, endpoint: "${mcp.url}", method: tools/call, tool: "{{ workload.tool }}", arguments: { text: "{{ workload.arguments.text }}" } }
`;

describe('agents terminal', () => {
  it('lists visible agents by workspace and runs a tool on a real MCP server', async () => {
    for (const [path, terminal] of [
      ['agents/echo', '{ visible: true, workspace: tools, scopes: [demo], capabilities: [echo, add] }'],
      ['agents/hidden', '{ visible: false, workspace: tools }'],
    ]) {
      const r = await http(stack.url, 'POST', '/api/catalog/register', { content: agent(path, terminal), resource_type: 'agent' });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // /api/agents and /api/mcp/servers exist now: any failed request is a defect.
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${stack.url}/ui/#/agents`);
    await page.getByRole('heading', { name: 'tools' }).waitFor();
    expect(await page.locator('.card').count()).toBe(1);
    await page.getByRole('button', { name: /echo agents\/echo/ }).click();
    await page.getByLabel('Tool').fill('echo');
    await page.getByLabel('Arguments (JSON)').fill('{"text": "hello from the terminal"}');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('.run-output .badge', { hasText: 'completed' }).waitFor({ timeout: 20_000 });
    expect(await page.locator('.run-output').textContent()).toContain('hello from the terminal');
    await page.screenshot({ path: screenshotPath('agents'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
