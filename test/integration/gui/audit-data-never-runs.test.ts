// "Nothing runs from data" in a real browser: a playbook whose every free text (name, description,
// step and tool names, workload, a task's output, an error message, a limit key, a trigger's
// description, a signal's payload, labels, a credential's description) is markup that would run
// script, fetch from another origin, add a javascript: link or a style. The console's pages show
// it as text: with the page's Content-Security-Policy bypassed (so the console's own escaping is
// what is tested), no flag is set, the trap server on port 0 hears nothing and no such element
// exists. Then the policies themselves: on every HTML answer they refuse inline script, foreign
// requests and javascript: URLs.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let stack: TestStack;
let browser: Browser;
let trap: HttpTarget;
const errors: string[] = [];

/** Markup that, parsed as HTML anywhere, sets window.__pwned and calls the trap, marked `tag`. */
const payload = (tag: string): string =>
  [
    `<img src=x onerror="(window.__pwned=window.__pwned||[]).push('${tag}-img');fetch('${trap.url}/${tag}-img')">`,
    `</script><script>(window.__pwned=window.__pwned||[]).push('${tag}-script')</script>`,
    `<svg><foreignObject><img src="${trap.url}/${tag}-fo"></foreignObject><image href="${trap.url}/${tag}-svgimage"/></svg>`,
    `<a href="javascript:(window.__pwned=window.__pwned||[]).push('${tag}-js')">${tag}-link</a>`,
    `<style>body{background:url(${trap.url}/${tag}-css)}</style><b style="background:url(${trap.url}/${tag}-attr)">${tag}</b>`,
  ].join('');

/** The same in under 256 characters, for names the API keeps short (a step's). */
const short = (tag: string): string =>
  `<img src=x onerror="(window.__pwned=window.__pwned||[]).push('${tag}')"></script><script>window.__pwned=['${tag}-s']</script><a href="javascript:window.__pwned=['${tag}-js']">${tag}</a>`;

/** Elements only the markup above makes, counted in the page. */
const INJECTED =
  "document.querySelectorAll('img[src=x], [onerror], script:not([src]), foreignObject, a[href^=\"javascript\" i], style, [style*=\"url(\" i], image').length";

let executionId = 0;
let failedId = 0;

beforeAll(async () => {
  ensureGuiBuilt();
  trap = await startHttpTarget(() => undefined);
  stack = await startTestStack({ workers: 1 });
  expect((await http(stack.url, 'PUT', '/api/limits/xss_slot', { concurrency: 1 })).status).toBeLessThan(300);
  // JSON is YAML: every payload goes in as a string, whatever it holds.
  const playbook = {
    apiVersion: 'svc/v1',
    kind: 'Playbook',
    metadata: { name: payload('name'), path: 'xss/probe', description: payload('description') },
    workload: { k: short('key'), w: payload('workload'), [short('wkey')]: 1 },
    inputs: { who: { type: 'string', description: payload('input'), enum: [payload('enum'), 'plain'], default: 'plain' } },
    concurrency: { limit: 'xss_slot', key: '{{ workload.k }}' },
    triggers: [{ name: 'nightly', kind: 'schedule', description: payload('trigger'), cron: '30 3 * * *' }],
    workflow: [
      {
        step: short('step'),
        tool: [{ name: short('tool'), kind: 'shell', env: { X: payload('output') }, command: 'printf "%s" "$X"' }],
        next: 'waiter',
      },
      { step: 'waiter', wait: { signal: 'go' }, next: 'boom' },
      { step: 'boom', tool: [{ name: 'fail', kind: 'shell', env: { X: payload('error') }, command: 'echo "$X" >&2; exit 3' }] },
    ],
  };
  const registered = await stack.register(JSON.stringify(playbook));
  // A keychain entry whose credential type is markup (at most 100 characters; its name is letters and digits).
  const keychain = await http(stack.url, 'POST', `/api/keychain/${registered.catalog_id}/xss-keychain`, {
    token_data: { token: 't' },
    credential_type: `<img src=x onerror="window.__pwned=['kctype']">kctype`,
  });
  expect(keychain.status, JSON.stringify(keychain.body)).toBeLessThan(300);
  const run = await http(stack.url, 'POST', '/api/run/playbook', { path: 'xss/probe', payload: {}, labels: { tenant: short('label') } });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  failedId = run.body.execution_id;
  const signal = await waitForWait(failedId);
  expect(signal).toBe(true);
  const sent = await http(stack.url, 'POST', `/api/executions/${failedId}/signals/go`, { payload: { [short('signalkey')]: payload('signal') } });
  expect(sent.status, JSON.stringify(sent.body)).toBeLessThan(300);
  await stack.wait(failedId);
  // A second one, queued behind a first held at its wait: the waits panel names the limit's key.
  executionId = await stack.run('xss/probe');
  await waitForWait(executionId);
  // An agent and an MCP server, as the Agents page lists them.
  const agent = { apiVersion: 'svc/v1', kind: 'Playbook', metadata: { name: payload('agent'), path: 'xss/agent', agent: true, description: payload('agentdesc'), terminal: { visible: true, workspace: short('space') } }, workflow: [{ step: 'start', wait: { for: 0 } }] };
  const mcpServer = { apiVersion: 'svc/v1', kind: 'Mcp', metadata: { name: 'xss-mcp', description: payload('mcp') }, endpoint: 'http://127.0.0.1:9/mcp', transport: 'streamable-http' };
  for (const [content, type] of [[agent, 'agent'], [mcpServer, 'mcp']] as const) {
    const r = await http(stack.url, 'POST', '/api/catalog/register', { content: JSON.stringify(content), resource_type: type });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  const cred = await http(stack.url, 'POST', '/api/credentials', { name: 'xss-cred', type: 'bearer', data: { token: 't' }, description: payload('credential') });
  expect(cred.status, JSON.stringify(cred.body)).toBe(201);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await trap?.close();
});

/** True once execution `id` waits for its signal (its `waits` name it). */
async function waitForWait(id: number): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    const r = await http(stack.url, 'GET', `/api/executions/${id}`);
    if (JSON.stringify(r.body.waits ?? []).includes('go')) return true;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  return false;
}

/** A page that watches for errors, in `context`. */
async function watchedPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`${page.url()}: pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    errors.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return page;
}

describe('attacker-controlled data in the console', () => {
  it('shows as text on every page and panel, with the page policy bypassed', async () => {
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    const page = await watchedPage(context);
    const pages: [string, string][] = [
      ['#/executions', 'xss/probe'],
      [`#/executions/${failedId}`, 'exit_code'],
      [`#/executions/${executionId}`, 'xss_slot'],
      ['#/catalog', 'xss/probe'],
      ['#/catalog/entry/xss%2Fprobe', 'description-img'],
      ['#/triggers', 'nightly'],
      ['#/triggers?path=xss%2Fprobe&name=nightly', 'trigger-img'],
      ['#/operations?limit=xss_slot', "push('key')"],
      ['#/operations', 'xss-cred'],
      [`#/executions?label=${encodeURIComponent(`tenant:${short('label')}`)}`, 'xss/probe'],
      ['#/catalog/edit/xss%2Fprobe', 'Edit xss/probe'],
      ['#/agents', 'agentdesc-img'],
      ['#/catalog/entry/xss-mcp', 'xss-mcp'],
      // A link someone else wrote: the route itself is data the error pages repeat.
      [`#/executions/${encodeURIComponent(short('route'))}`, 'an execution id is a number'],
      [`#/catalog/entry/${encodeURIComponent(short('entry'))}`, 'entry'],
      [`#/${encodeURIComponent(short('nowhere'))}`, 'Nothing here'],
    ];
    let seen = '';
    for (const [route, text] of pages) {
      await page.goto(`${stack.url}/ui/${route}`);
      await page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(text)})`, undefined, { timeout: 15_000 }).catch(async () => {
        throw new Error(`${route}: no ${text} in ${await page.evaluate('document.body.innerText')}`);
      });
      // Every panel that opens on click: each step of the graph, each bar of the timeline.
      for (const target of await page.locator('svg.graph [data-step], .gantt [data-bar]').all()) {
        await target.click({ timeout: 2_000 }).catch(() => undefined);
        await page.waitForTimeout(150);
        seen += String(await page.evaluate('document.body.innerText'));
      }
      expect(await page.evaluate(INJECTED), `${route}: injected elements`).toBe(0);
      expect(await page.evaluate('window.__pwned ?? null'), route).toBeNull();
      seen += String(await page.evaluate('document.body.innerText'));
    }
    // The editor's problems, whose messages repeat what was written (an unknown field's name).
    await page.goto(`${stack.url}/ui/#/catalog/new`);
    await page.getByLabel('Playbook YAML').fill(
      JSON.stringify({ apiVersion: 'svc/v1', kind: 'Playbook', metadata: { name: 'p', path: 'xss/problem' }, workflow: [{ step: 'start', [short('field')]: 1, next: short('arc') }] }),
    );
    await page.getByRole('button', { name: 'Register' }).click();
    await page.locator('.problems li').first().waitFor();
    seen += String(await page.evaluate('document.body.innerText'));
    expect(await page.evaluate(INJECTED), 'editor: injected elements').toBe(0);
    // Every payload was shown somewhere, as the text it is (a signal's payload is the waiting step's
    // output, which no panel shows).
    const shown = ['name-img', 'description-img', 'workload-img', 'trigger-img', 'credential-img', 'output-img', 'error-img', 'agent-img', 'input-img', 'enum-img', "push('field')", "push('step')", "push('tool')", "push('label')", "push('key')"];
    expect(shown.filter((tag) => !seen.includes(tag))).toEqual([]);
    // The keychain's entries, of the playbook chosen.
    await page.goto(`${stack.url}/ui/#/operations`);
    const chooser = page.locator('section', { hasText: 'Keychain' }).locator('select');
    await chooser.selectOption({ label: 'xss/probe v1' });
    await page.waitForFunction(`document.body.innerText.includes('xss-keychain')`, undefined, { timeout: 10_000 });
    expect(await page.evaluate(INJECTED), 'keychain: injected elements').toBe(0);
    expect(await page.evaluate('document.body.innerText.includes("kctype")')).toBe(true);
    // The data is on the pages, as text.
    await page.goto(`${stack.url}/ui/#/executions/${failedId}`);
    await page.waitForFunction(`document.body.innerText.includes('<img src=x onerror=')`, undefined, { timeout: 15_000 });
    expect(trap.requests.map((r) => r.path)).toEqual([]);
    expect(errors).toEqual([]);
    // The watch itself sees markup that runs: the same payload parsed as HTML sets the flag and calls the trap.
    await page.evaluate(`document.body.insertAdjacentHTML('beforeend', ${JSON.stringify(payload('canary'))})`);
    await page.waitForFunction('(window.__pwned ?? []).includes("canary-img")', undefined, { timeout: 5_000 });
    expect(await page.evaluate(INJECTED)).toBeGreaterThan(0);
    await expect.poll(() => trap.requests.map((r) => r.path).filter((p) => p.startsWith('/canary')).length).toBeGreaterThan(0);
    trap.requests.length = 0;
    await context.close();
  }, 120_000);

  it('meets, on every HTML answer, a policy that refuses inline script, foreign requests and javascript: URLs', async () => {
    // The API's document comes from the routes alone: none of the data above is in it.
    const doc = await http(stack.url, 'GET', '/docs/json');
    expect(doc.status).toBe(200);
    expect(JSON.stringify(doc.body)).not.toMatch(/onerror|xss|javascript:/i);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await watchedPage(context);
    // Swagger UI asked to load another origin's document (its `url` and `configUrl` query) loads nothing.
    const pages = ['/ui/', `/ui/#/executions/${failedId}`, `/docs?url=${trap.url}/spec.json&configUrl=${trap.url}/config.json`, '/docs/static/oauth2-redirect.html', '/redoc', `/api/executions/${failedId}`];
    for (const path of pages) {
      // Each a new document (not a move within the last one's hash), whose policy came with it.
      await page.goto('about:blank');
      const answer = await page.goto(`${stack.url}${path}`);
      const headers = answer!.headers();
      expect(headers['x-content-type-options'], path).toBe('nosniff');
      const policy = headers['content-security-policy'] ?? '';
      if (headers['content-type']?.startsWith('text/html')) {
        expect(policy, path).toMatch(/(^|; )script-src 'self'( 'unsafe-eval')?;/);
        expect(policy, path).toMatch(/(^|; )default-src 'self';/);
        expect(policy, path).toMatch(/(^|; )object-src 'none';/);
        expect(policy, path).toMatch(/(^|; )base-uri 'none';/);
      } else expect(headers['content-type'], path).toMatch(/^application\/json/);
      await page.waitForLoadState('load');
      await page.waitForTimeout(300);
      // Markup planted in the page by other means (as a defect elsewhere would) still runs nothing.
      await page.evaluate(`(() => {
        window.__violations = [];
        document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.effectiveDirective));
        const d = document.createElement('div');
        d.innerHTML = ${JSON.stringify(payload('policy'))};
        document.documentElement.append(d);
        const s = document.createElement('script');
        s.textContent = "(window.__pwned = window.__pwned || []).push('inline')";
        document.documentElement.append(s);
        const foreign = document.createElement('script');
        foreign.src = ${JSON.stringify(`${trap.url}/foreign.js`)};
        document.documentElement.append(foreign);
        d.querySelector('a').click();
      })()`);
      await page.waitForTimeout(500);
      expect(await page.evaluate('window.__pwned ?? null'), path).toBeNull();
      if (headers['content-type']?.startsWith('text/html')) expect(await page.evaluate('window.__violations.length'), path).toBeGreaterThan(0);
    }
    // (Page errors are not counted here: Swagger UI's OAuth page throws without the window that
    // opened it, and a page left mid-request may reject its fetch.)
    expect(trap.requests.map((r) => r.path)).toEqual([]);
    await context.close();
  }, 60_000);
});
