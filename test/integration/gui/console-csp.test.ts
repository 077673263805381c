// The console and the API docs under their Content-Security-Policy (src/security-headers.ts):
// every page renders in a real browser with nothing refused (the console's live inspection
// WebSocket included), and a page of another origin cannot frame the console, whose buttons
// cancel, pause and approve.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const WAITING = `apiVersion: svc/v1
kind: Playbook
metadata: { name: waiting, path: csp/waiting }
workflow:
  - step: start
    wait: { signal: go }
`;

let stack: TestStack;
let browser: Browser;
let page: Page;
let other: HttpTarget;
const refused: string[] = [];

beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 0 });
  await stack.register(WAITING);
  // Another origin whose page tries to frame the console.
  other = await startHttpTarget((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>other site</title><iframe id="f" src="${stack.url}/ui/" width="800" height="600"></iframe>`);
  });
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => refused.push(`${page.url()}: pageerror ${e.message}`));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await other?.close();
  await stack?.close();
});

describe('the console and the docs under their Content-Security-Policy', () => {
  it('render with nothing refused, the live inspection WebSocket included', async () => {
    const id = await stack.run('csp/waiting');
    const sockets: string[] = [];
    page.on('websocket', (ws) => sockets.push(ws.url()));
    const pages: [string, string][] = [
      ['/ui/#/executions', 'Executions'],
      [`/ui/#/executions/${id}`, `Execution ${id}`],
      ['/ui/#/catalog/new', 'Register a playbook'],
      ['/ui/#/catalog/entry/csp/waiting', 'csp/waiting'],
      ['/ui/#/triggers', 'Triggers'],
      ['/ui/#/operations', 'Worker pools'],
      ['/docs', 'Workflow orchestration service'],
      ['/redoc', 'Service health'],
    ];
    for (const [path, text] of pages) {
      const answer = await page.goto(`${stack.url}${path}`);
      // A new document (the console's first page, each docs page): its policy came with it.
      if (answer) expect(answer.headers()['content-security-policy'], path).toMatch(/frame-ancestors 'none'/);
      await page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(text)})`, undefined, { timeout: 15_000 });
    }
    expect(sockets).toContain(`${stack.url.replace('http', 'ws')}/api/executions/${id}/inspect`);
    expect(refused).toEqual([]);
  });

  it('cannot be framed by another origin', async () => {
    refused.length = 0;
    await page.goto(`${other.url}/`);
    // The browser refuses to show it and says why: the frame holds its error page, not the console.
    await page.waitForFunction("document.querySelector('iframe') !== null");
    await expect.poll(() => page.frames().find((f) => f !== page.mainFrame())?.url(), { timeout: 10_000 }).toBe('chrome-error://chromewebdata/');
    expect(refused.join('\n')).toMatch(/violates the following Content Security Policy directive: "frame-ancestors 'none'"/);
    // The API answers the same way to any client: not to be framed, its type not to be guessed.
    const health = await fetch(`${stack.url}/api/health`);
    expect(health.headers.get('x-frame-options')).toBe('DENY');
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    expect(health.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    const notFound = await http(stack.url, 'GET', '/api/nothing-here');
    expect(notFound.status).toBe(404);
  });
});
