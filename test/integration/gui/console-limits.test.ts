// Flow control in the console (issue 31 item 5), in a real browser against a real server, worker
// and PostgreSQL: executions of a playbook limited per tenant (`concurrency: {limit: tenant, key:
// "{{ workload.tenant }}"}`, each holding its slot in a 10-minute wait) are queued before the limit
// is defined (the Limits panel marks it "not defined") and beyond its room after; the panel shows
// each key's running and queued counts, the execution view of a queued one names its limit and key,
// the list's status filter has `queued` with its count. A playbook's inline limit (@<path>) is
// listed with its keys. An operator defines a rate limit with the form; a task limited by it waits
// for a token (the key's waiting count and tokens; the execution's page names the step, limit and
// key); deleting it while it holds work is refused (409 shown), once idle it goes. The
// page reflows at 200 % zoom. Behind the real gateway, a viewer sees the limits but not the form.
// Screenshots for docs/gui.md (SVC_UPDATE_SCREENSHOTS=1). No console errors.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { startConsoleStack, type ConsoleStack } from '../../helpers/console-stack.ts';
import type { TestGateway } from '../../helpers/gateway.ts';
import { ensureGuiBuilt, screenshotPath } from '../../helpers/gui-build.ts';
import { http, type Json } from '../../helpers/http.ts';
import type { TestProvider } from '../../helpers/oidc-provider.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const TENANT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: tenant_job, path: gui/limits/tenant }
workload: { tenant: none }
concurrency: { limit: tenant, key: "{{ workload.tenant }}" }
workflow:
  - step: hold
    wait: { for: 10m }
`;

// Its own limit: one at a time per key (listed as @gui/limits/inline).
const INLINE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: inline_job, path: gui/limits/inline }
workload: { k: none }
concurrency: { limit: 1, key: "{{ workload.k }}" }
workflow:
  - step: hold
    wait: { for: 10m }
`;

// A partner API's rate: the task's command waits PENDING for a token of its key.
const PARTNER = `apiVersion: svc/v1
kind: Playbook
metadata: { name: partner_call, path: gui/limits/partner }
workload: { partner: none }
workflow:
  - step: call
    tool: { name: call, kind: shell, command: "echo called", limit: { name: partner, key: "{{ workload.partner }}" } }
`;

/** The counts a row of the Limits panel (or of a limit's keys) shows. */
const countsOf = (row: ReturnType<Page['locator']>) =>
  row.evaluate((tr) => Object.fromEntries([...tr.querySelectorAll('[data-count]')].map((td) => [td.getAttribute('data-count'), td.textContent])));

describe('limits in the console (SVC_AUTH=none)', () => {
  let stack: TestStack;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const acme: number[] = [];
  let globex: number;

  beforeAll(async () => {
    ensureGuiBuilt();
    stack = await startTestStack({ workers: 1, concurrency: 4, workerOptions: { shell: UNSANDBOXED_SHELL } });
    await stack.register(TENANT);
    await stack.register(PARTNER);
    await stack.register(INLINE);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      // 409 is the refused delete the test asks for; anything else logged is a defect.
      if (m.type() === 'error' && !/status of (404|409)/.test(m.text())) errors.push(m.text());
    });
    page.on('dialog', (d) => void d.accept());
    page.on('response', (r) => {
      if (r.status() >= 500) errors.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const limitsPanel = () => page.getByRole('region', { name: 'Limits' });
  const limitRow = (name: string) => limitsPanel().locator(`tr[data-limit="${name}"]`);
  const keyRow = (limit: string, key: string) => page.getByRole('region', { name: `Keys of ${limit}` }).locator(`tr[data-key="${key}"]`);

  it('marks a limit playbooks name but nobody defined: its executions stay queued', async () => {
    globex = await stack.run('gui/limits/tenant', { tenant: 'globex' });
    expect((await http(stack.url, 'GET', `/api/executions/${globex}`)).body.status).toBe('queued');
    await page.goto(`${stack.url}/ui/#/operations`);
    await limitRow('tenant').locator('.badge', { hasText: 'not defined: its work waits' }).waitFor();
    expect(await countsOf(limitRow('tenant'))).toEqual({ running: '0', queued: '1', waiting: '0' });
  });

  it('shows each key’s running and queued counts once the limit is defined, live', async () => {
    expect((await http(stack.url, 'PUT', '/api/limits/tenant', { concurrency: 2 })).status).toBe(200);
    for (let i = 0; i < 5; i++) acme.push(await stack.run('gui/limits/tenant', { tenant: 'acme' }));
    // Two of acme's five hold its slots; globex's one is admitted on its own key (no head-of-line blocking).
    await until('acme 2 running, 3 queued; globex admitted', async () => {
      const detail = (await http(stack.url, 'GET', '/api/limits/tenant')).body;
      const key = (k: string) => detail.key_list?.find((x: Json) => x.key === k);
      return key('acme')?.running === 2 && key('acme')?.queued === 3 && key('globex')?.running === 1;
    }, 15_000, 100);
    // The panel follows without a reload.
    await until('the panel counts 3 running, 3 queued', async () => JSON.stringify(await countsOf(limitRow('tenant'))) === JSON.stringify({ running: '3', queued: '3', waiting: '0' }), 10_000, 100);
    expect(await limitRow('tenant').locator('.badge').count()).toBe(0);
    expect(await limitRow('tenant').locator('td').first().textContent()).toBe('2');

    await limitRow('tenant').getByRole('button', { name: 'tenant' }).click();
    await page.waitForURL(/#\/operations\?limit=tenant$/);
    await keyRow('tenant', 'acme').waitFor();
    expect(await countsOf(keyRow('tenant', 'acme'))).toEqual({ running: '2', queued: '3', waiting: '0', tokens: '—' });
    expect(await countsOf(keyRow('tenant', 'globex'))).toEqual({ running: '1', queued: '0', waiting: '0', tokens: '—' });
    await page.getByRole('region', { name: 'Keys of tenant' }).getByText('at most 2 running per key; no rate.').waitFor();
    // The form holds the selected limit's values.
    const form = page.getByRole('form', { name: 'Set limit' });
    expect(await form.getByLabel('Name').inputValue()).toBe('tenant');
    expect(await form.getByLabel('Concurrency (per key)').inputValue()).toBe('2');
  });

  it('says on a queued execution’s page which limit and key it waits on; the list filters queued ones', async () => {
    const queued = (await Promise.all(acme.map(async (id) => ({ id, status: (await http(stack.url, 'GET', `/api/executions/${id}`)).body.status })))).filter((e) => e.status === 'queued');
    expect(queued).toHaveLength(3);
    const id = queued[0].id;
    const flow = (await http(stack.url, 'GET', `/api/executions/${id}`)).body.flow;
    expect(flow).toMatchObject({ limit: 'tenant', key: 'acme', admitted_at: null });

    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const badge = page.locator('.facts .badge').first();
    await badge.filter({ hasText: /^queued$/ }).waitFor();
    expect(await badge.getAttribute('class')).toContain('s-queued');
    const waits = page.locator('.facts dd.flow');
    // Today's moments as their time of day, in the browser's own format.
    const since = await page.evaluate((iso) => new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: 'numeric', second: 'numeric', hour12: false }).format(new Date(iso)), flow.queued_at as string);
    expect(await page.locator('.facts dt', { hasText: 'Waits for' }).count()).toBe(1);
    expect(await waits.getAttribute('data-flow-state')).toBe('queued');
    expect(await waits.textContent()).toBe(`queued on limit tenant, key acme since ${since} · priority 5`);
    await page.screenshot({ path: screenshotPath('execution-queued'), fullPage: true });

    // An admitted one says which slot it holds.
    const admitted = acme.find((a) => !queued.some((q) => q.id === a))!;
    await page.goto(`${stack.url}/ui/#/executions/${admitted}`);
    await badge.filter({ hasText: /^running$/ }).waitFor();
    expect(await waits.textContent()).toMatch(/^holds a slot of limit tenant, key acme since \d{1,2}:\d{2}:\d{2} \(queued (\d+ ms|[\d.]+ s)\) · priority 5$/);

    // The limit's name links to its keys.
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await waits.getByRole('link', { name: 'tenant' }).click();
    await page.waitForURL(/#\/operations\?limit=tenant$/);
    await keyRow('tenant', 'acme').waitFor();

    // The list's filter has queued, with its count, and finds the three.
    await page.goto(`${stack.url}/ui/#/executions`);
    await page.getByLabel('Status').locator('option[value="queued"]', { hasText: 'queued (3)' }).waitFor({ state: 'attached' });
    await page.getByLabel('Status').selectOption('queued');
    await page.waitForURL(/status=queued/);
    await until('three queued rows', async () => (await page.locator('table.list tbody tr').count()) === 3, 10_000, 100);
    expect(await page.locator('table.list tbody .badge.s-queued').count()).toBe(3);
  });

  it('lists a playbook’s inline limit with its keys', async () => {
    for (let i = 0; i < 2; i++) await stack.run('gui/limits/inline', { k: 'x' });
    await page.goto(`${stack.url}/ui/#/operations`);
    const row = limitRow('@gui/limits/inline');
    await row.locator('.badge', { hasText: 'inline: playbook gui/limits/inline' }).waitFor();
    await until('one running, one queued', async () => (await countsOf(row)).queued === '1' && (await countsOf(row)).running === '1', 10_000, 100);
    await row.getByRole('button', { name: '@gui/limits/inline' }).click();
    await keyRow('@gui/limits/inline', 'x').waitFor();
    expect(await countsOf(keyRow('@gui/limits/inline', 'x'))).toEqual({ running: '1', queued: '1', waiting: '0', tokens: '—' });
    await page.getByRole('region', { name: 'Keys of @gui/limits/inline' }).getByText('The concurrency: {limit: N} of playbook gui/limits/inline').waitFor();
    // Nothing to set or delete: the playbook holds it.
    expect(await page.getByRole('form', { name: 'Set limit' }).getByLabel('Name').inputValue()).toBe('');
    expect(await page.getByRole('button', { name: /^Delete / }).count()).toBe(0);
  });

  it('lets an operator define a rate limit; a limited task waits for a token; delete is refused while it holds work', async () => {
    await page.goto(`${stack.url}/ui/#/operations`);
    const form = page.getByRole('form', { name: 'Set limit' });
    await form.getByLabel('Name').fill('partner');
    await form.getByLabel('Rate (per key)').fill('1');
    await form.getByLabel('Per (seconds)').fill('600');
    await form.getByRole('button', { name: 'Save' }).click();
    await limitsPanel().getByRole('status').filter({ hasText: 'Limit partner created.' }).waitFor();
    await page.waitForURL(/#\/operations\?limit=partner$/);
    expect((await http(stack.url, 'GET', '/api/limits/partner')).body).toMatchObject({ defined: true, concurrency: null, rate: { limit: 1, period_seconds: 600, burst: 1 } });
    // Its row was there before (its playbook names it, not defined): it shows the rate at the list's reload.
    await until('the row shows the rate', async () => (await limitRow('partner').locator('td').nth(1).textContent()) === '1 / 600 s, burst 1', 10_000, 100);

    // The first call takes the key's one token; the second waits for the next (10 minutes away).
    const first = await stack.run('gui/limits/partner', { partner: 'p1' });
    expect((await stack.wait(first, 20_000)).status).toBe('completed');
    const second = await stack.run('gui/limits/partner', { partner: 'p1' });
    await keyRow('partner', 'p1').waitFor();
    await until('the partner key counts one waiting', async () => (await countsOf(keyRow('partner', 'p1'))).waiting === '1', 15_000, 100);
    expect(await countsOf(keyRow('partner', 'p1'))).toEqual({ running: '0', queued: '0', waiting: '1', tokens: '0' });
    // The limits list reloads apart from the open key's rows: wait for its next reload.
    await until('the partner row counts one waiting', async () => (await countsOf(limitRow('partner'))).waiting === '1', 15_000, 100);
    expect(await countsOf(limitRow('partner'))).toEqual({ running: '0', queued: '0', waiting: '1' });
    // The execution's page says which of its commands waits on which key (the API's limit_waits).
    expect((await http(stack.url, 'GET', `/api/executions/${second}`)).body.limit_waits).toMatchObject([{ step: 'call', limit: 'partner', key: 'p1' }]);
    await page.goto(`${stack.url}/ui/#/executions/${second}`);
    const wait = page.getByRole('listitem', { name: 'limit wait of call' });
    expect(await wait.locator('dd.limit-wait').textContent()).toMatch(/^room on limit partner, key p1 since \d{1,2}:\d{2}:\d{2}$/);
    await wait.getByRole('link', { name: 'partner' }).click();
    await page.waitForURL(/#\/operations\?limit=partner$/);
    await keyRow('partner', 'p1').waitFor();

    // The limits panel, tenant's keys open: the picture docs/gui.md shows.
    await limitRow('tenant').getByRole('button', { name: 'tenant' }).click();
    await keyRow('tenant', 'acme').waitFor();
    await limitsPanel().screenshot({ path: screenshotPath('limits') });

    // Delete: refused while a command waits on it, done once it is idle.
    await limitRow('partner').getByRole('button', { name: 'partner' }).click();
    await page.getByRole('button', { name: 'Delete partner' }).click();
    await limitsPanel().getByRole('alert').filter({ hasText: /^409: limit partner holds, queues or has work waiting/ }).waitFor();
    expect((await http(stack.url, 'POST', `/api/executions/${second}/cancel`, { reason: 'test' })).status).toBe(200);
    await until('partner idle', async () => (await http(stack.url, 'GET', '/api/limits/partner')).body.waiting === 0, 10_000, 100);
    await page.getByRole('button', { name: 'Delete partner' }).click();
    await limitsPanel().getByRole('status').filter({ hasText: 'Limit partner deleted.' }).waitFor();
    await page.waitForURL(/#\/operations$/);
    // Its playbook still names it: it stays, not defined (its work would wait until it is).
    expect((await http(stack.url, 'GET', '/api/limits/partner')).body).toMatchObject({ name: 'partner', defined: false, concurrency: null, rate: null, keys: 0 });
  });

  it('reflows at 200 % zoom, a limit’s keys and the form open', async () => {
    await page.setViewportSize({ width: 640, height: 900 });
    await page.goto(`${stack.url}/ui/#/operations?limit=tenant`);
    await keyRow('tenant', 'acme').waitFor();
    await page.waitForTimeout(300);
    expect(Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'))).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('wrote nothing to the browser console', () => {
    expect(errors).toEqual([]);
  });
});

describe('limits behind the gateway: a viewer reads them, an operator sets them', () => {
  const SECRET = 'gateway-secret-for-the-limits-test-0123456789';
  let idp: TestProvider;
  let stack: TestStack;
  let gw: TestGateway;
  let consoleStack: ConsoleStack | undefined;
  let browser: Browser;
  let pub: string;
  const errors: string[] = [];
  beforeAll(async () => {
    ensureGuiBuilt();
    consoleStack = await startConsoleStack(SECRET);
    ({ idp, stack, gw, pub } = consoleStack);
    const operator = bearer(await createApiToken(stack.deps.db, 'limits-operator', 'operator'));
    expect((await http(stack.url, 'PUT', '/api/limits/exports', { concurrency: 2, rate: { limit: 10, period_seconds: 1, burst: 5 } }, operator)).status).toBe(200);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await consoleStack?.close();
  });

  /** Opens the console's operations page at the gateway, `login` signed in through the provider's own pages. */
  async function operationsAs(context: BrowserContext, login: string): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // The provider's dev login page links assets off this machine; /auth/me answers 401 before login.
      if (m.location().url.startsWith(pub) && m.type() === 'error' && !/status of (401|404)/.test(m.text())) errors.push(`${login}: ${m.text()}`);
    });
    await page.goto(`${pub}/`, { waitUntil: 'domcontentloaded' });
    await page.waitForURL((u) => u.toString().startsWith(idp.issuer), { waitUntil: 'domcontentloaded' });
    for (let i = 0; i < 4 && !page.url().startsWith(pub); i++) {
      if (await page.locator('input[name=login]').count()) {
        await page.fill('input[name=login]', login);
        await page.fill('input[name=password]', 'any-password');
      }
      await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type=submit]')]);
    }
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    await page.goto(`${pub}/#/operations?limit=exports`);
    await page.getByRole('region', { name: 'Keys of exports' }).getByText('at most 2 running per key; rate 10 / 1 s, burst 5 per key.', { exact: false }).waitFor();
    return page;
  }

  it('a viewer sees the limits without the form; an operator gets it', async () => {
    const viewerContext = await browser.newContext();
    const viewer = await operationsAs(viewerContext, 'victor');
    const row = viewer.getByRole('region', { name: 'Limits' }).locator('tr[data-limit="exports"]');
    expect(await row.locator('td').nth(1).textContent()).toBe('10 / 1 s, burst 5');
    expect(await viewer.getByRole('form', { name: 'Set limit' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: 'Delete exports' }).count()).toBe(0);
    await viewerContext.close();

    const operatorContext = await browser.newContext();
    const operator = await operationsAs(operatorContext, 'olivia');
    const form = operator.getByRole('form', { name: 'Set limit' });
    // Filled from the list once it is read (the keys may come first).
    await until('the form holds exports’ values', async () => (await form.getByLabel('Concurrency (per key)').inputValue()) === '2', 10_000, 50);
    expect(await form.getByLabel('Burst').inputValue()).toBe('5');
    await form.getByLabel('Concurrency (per key)').fill('3');
    await form.getByRole('button', { name: 'Save' }).click();
    await operator.getByRole('status').filter({ hasText: 'Limit exports changed.' }).waitFor();
    await operatorContext.close();
    expect(errors).toEqual([]);
  }, 90_000);
});
