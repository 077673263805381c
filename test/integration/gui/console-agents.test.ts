// The agents terminal in a real browser against a real server, worker and MCP server: agents listed
// by workspace (hidden ones not); the shipped agent (examples/agents/mcp-agent.yaml) lists the tools,
// calls `add` (the console sends method tools/call with the tool and its arguments) and shows its
// result; a tool that fails shows the run failed, also when the playbook handles the error.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt, screenshotPath } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server.ts';
import { ROOT } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
let mcp: TestMcpServer;
let browser: Browser;

// An agent whose step handles its tool's error (the execution completes although the call failed).
const careful = `apiVersion: svc/v1
kind: Playbook
metadata: { name: careful, path: agents/careful, agent: true, terminal: { visible: true, workspace: guarded, capabilities: [tools/call] } }
workload: { method: tools/call, tool: null, arguments: {} }
workflow:
  - step: start
    tool:
      - { name: call, kind: mcp, server: demo, method: "{{ workload.method }}", tool: "{{ workload.tool }}", arguments: "{{ workload.arguments }}" }
    next:
      - { step: noted, when: "{{ outcome.status == 'error' }}" }
  - step: noted
    wait: { for: 0 }
`;

const register = async (content: string, resourceType: string) => {
  const r = await http(stack.url, 'POST', '/api/catalog/register', { content, resource_type: resourceType });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
};

beforeAll(async () => {
  ensureGuiBuilt();
  mcp = await startMcpServer();
  stack = await startTestStack({ workers: 1 });
  browser = await launchBrowser();
  // The shipped agent as it is, and the MCP server it names by default (`demo`) registered at the test server.
  await register(await readFile(join(ROOT, 'examples/agents/mcp-agent.yaml'), 'utf8'), 'agent');
  await register(`apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: demo, description: the test MCP server (echo, add, fail, slow) }\nendpoint: ${mcp.url}\ntransport: streamable-http\n`, 'mcp');
  await register(careful, 'agent');
  await register(
    `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: hidden, path: agents/hidden, agent: true, terminal: { visible: false, workspace: demo } }\nworkflow:\n  - step: start\n    wait: { for: 0 }\n`,
    'agent',
  );
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await mcp?.close();
});

/** Presses `button` of the terminal and waits for the output of the run it started: the request shown is `asked`. */
async function runAndWait(page: Page, button: string, asked: string) {
  await page.getByRole('button', { name: button, exact: true }).click();
  const output = page.locator('.run-output').filter({ has: page.locator('code', { hasText: asked }) });
  await output.locator('.badge').first().filter({ hasText: /^(completed|failed|cancelled)$/ }).waitFor({ timeout: 20_000 });
  const id = Number((await output.getByRole('link', { name: /^Execution \d+$/ }).textContent())?.replace('Execution ', ''));
  return { output, id, status: await output.locator('.badge').first().textContent() };
}

describe('agents terminal', () => {
  it('lists the tools, calls add with its arguments and shows the result; a failed tool call shows failed', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // /api/agents and /api/mcp/servers exist now: any failed request is a defect.
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${stack.url}/ui/#/agents`);
    await page.getByRole('heading', { name: 'demo' }).waitFor();
    await page.getByRole('heading', { name: 'guarded' }).waitFor();
    expect(await page.locator('.card').count()).toBe(2);
    await page.getByRole('button', { name: /mcp-agent agents\/mcp/ }).click();

    // Run needs a tool; List tools asks the server (method tools/list) and offers each tool.
    expect(await page.getByRole('button', { name: 'Run', exact: true }).isDisabled()).toBe(true);
    const listing = await runAndWait(page, 'List tools', 'tools/list');
    expect(listing.status).toBe('completed');
    const tools = listing.output.getByRole('table', { name: 'Listed tools' });
    expect(await tools.locator('tbody tr td:first-child').allTextContents()).toEqual(['echo', 'add', 'fail', 'slow']);
    await tools.getByRole('button', { name: 'Use add' }).click();
    expect(await page.getByLabel('Tool', { exact: true }).inputValue()).toBe('add');
    expect(JSON.parse(await page.getByLabel('Arguments (JSON)').inputValue())).toEqual({ a: 0, b: 0 });

    // The call: method tools/call, the tool and its arguments reach the agent; the tool's answer is shown.
    await page.getByLabel('Arguments (JSON)').fill('{"a": 20, "b": 22}');
    const add = await runAndWait(page, 'Run', 'tools/call add');
    expect(add.status).toBe('completed');
    expect(await add.output.locator('pre.tool-output').textContent()).toBe('42');
    expect(await add.output.locator('details', { hasText: 'Structured content' }).locator('pre').textContent()).toContain('"sum": 42');
    const executed = await http(stack.url, 'GET', `/api/executions/${add.id}`);
    expect(executed.body).toMatchObject({ status: 'completed', result: { structuredContent: { sum: 42 } } });
    const started = (await stack.events(add.id)).find((e) => e.event_type === 'execution.started');
    expect(started?.context.input.workload).toMatchObject({ method: 'tools/call', tool: 'add', arguments: { a: 20, b: 22 } });
    await page.screenshot({ path: screenshotPath('agents'), fullPage: true });

    // A tool that reports an error: the run is failed (red), with the tool's message and what it said.
    await page.getByLabel('Tool', { exact: true }).fill('fail');
    await page.getByLabel('Arguments (JSON)').fill('{"text": "no such luck"}');
    const failed = await runAndWait(page, 'Run', 'tools/call fail');
    expect(failed.status).toBe('failed');
    expect((await http(stack.url, 'GET', `/api/executions/${failed.id}`)).body.status).toBe('failed');
    const call = failed.output.locator('.call');
    expect(await call.getAttribute('data-status')).toBe('failed');
    expect(await call.getByRole('alert').textContent()).toBe("MCP tool 'fail' returned an error: no such luck");
    expect(await call.locator('pre.tool-output').textContent()).toBe('no such luck');
    await page.screenshot({ path: screenshotPath('agents-failed'), fullPage: true });

    // An unknown tool fails too (the server's protocol error), never green.
    await page.getByLabel('Tool', { exact: true }).fill('subtract');
    await page.getByLabel('Arguments (JSON)').fill('{}');
    expect((await runAndWait(page, 'Run', 'tools/call subtract')).status).toBe('failed');

    // A playbook that handles the error completes; the run still shows the failed call as failed.
    await page.getByRole('button', { name: /careful agents\/careful/ }).click();
    await page.getByLabel('Tool', { exact: true }).fill('fail');
    const handled = await runAndWait(page, 'Run', 'tools/call fail');
    expect((await http(stack.url, 'GET', `/api/executions/${handled.id}`)).body.status).toBe('completed');
    expect(handled.status).toBe('failed');
    expect(await handled.output.textContent()).toContain('a tool call failed; the execution completed');
    expect(errors).toEqual([]);
    await page.close();
  });
});
