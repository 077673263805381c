// The execution page's controls in a real browser against a real server, worker and PostgreSQL:
// pause and resume a running execution (the paused badge, the list's filter); retry a failed one
// from its failed step and follow the links both ways; send a signal through the form (a payload
// that is not a JSON object refused first) and see the execution go on; a timer's wake time and
// countdown; cancel with a reason, not cascading. Then behind the real gateway, signed in through
// a real OpenID provider: a viewer, and an operator where the approval wants an admin, see the
// signal form disabled with the reason; an operator sends a signal any operator may. No console errors.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { startConsoleStack, type ConsoleStack } from '../../helpers/console-stack.ts';
import type { TestGateway } from '../../helpers/gateway.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import type { TestProvider } from '../../helpers/oidc-provider.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

// `slow`'s first step runs until the test creates its gate file: a slow machine cannot let the
// execution end before the test pauses it.
const slow = (gate: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: slow, path: gui/control/slow }
workflow:
  - step: first
    tool: [ { name: a, kind: shell, command: "while [ ! -e ${gate} ]; do sleep 0.05; done" } ]
    next: second
  - step: second
    tool: [ { name: b, kind: shell, command: "echo two" } ]
    next: third
  - step: third
    tool: [ { name: c, kind: shell, command: "echo three" } ]
`;

// `flaky` fails until the test creates the gate file (the worker's shell is not sandboxed here).
const flaky = (gate: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: flaky, path: gui/control/flaky }
workflow:
  - step: prepare
    tool: [ { name: p, kind: shell, command: "echo prepared" } ]
    next: flaky
  - step: flaky
    tool: [ { name: f, kind: shell, command: "test -f ${gate}" } ]
    next: finish
  - step: finish
    tool: [ { name: d, kind: shell, command: "echo done" } ]
`;

const approval = (path: string, wait: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: approval, path: ${path} }
workflow:
  - step: approve
    wait: ${wait}
    next: [ { step: deploy, when: "{{ signal.payload.approved }}" }, { step: rejected } ]
  - step: deploy
    tool: [ { name: d, kind: shell, command: "echo deployed" } ]
  - step: rejected
    tool: [ { name: r, kind: shell, command: "echo rejected" } ]
`;
const ADMIN_APPROVAL = approval('gui/control/approval', '{ signal: approval, timeout: 1h, approval: { roles: [admin] } }');
const ANY_OPERATOR = approval('gui/control/go', '{ signal: go }');
// A step named with a space: the form's id was made of it, and its disabled form's aria-describedby
// ('signal-manager approval-3-why') read as two ids that name nothing, the reason unsaid.
const SPACED_APPROVAL = `apiVersion: svc/v1
kind: Playbook
metadata: { name: spaced, path: gui/control/spaced }
workflow:
  - step: manager approval
    wait: { signal: sign, approval: { roles: [admin] } }
`;

const TIMER = `apiVersion: svc/v1
kind: Playbook
metadata: { name: timer, path: gui/control/timer }
workflow:
  - step: cool_down
    wait: { for: 30m }
    next: done
  - step: done
    tool: [ { name: d, kind: shell, command: "echo done" } ]
`;

// A `playbook` task whose child outlives nothing: the parent's step waits on its task's own timeout timer.
const SLEEPER = `apiVersion: svc/v1
kind: Playbook
metadata: { name: sleeper, path: gui/control/sleeper }
workflow:
  - step: nap
    wait: { for: 1h }
`;
const GUARDED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: guarded, path: gui/control/guarded }
workflow:
  - step: call
    tool: { name: kid, kind: playbook, path: gui/control/sleeper, timeout_seconds: 3600 }
`;

/** Status of every step box of the statechart on the page. */
const stepStatuses = (p: Page) =>
  p.$$eval('svg.graph [data-step]', (nodes) => Object.fromEntries(nodes.map((n) => [n.getAttribute('data-step'), n.getAttribute('data-status')])));
const badge = (p: Page) => p.locator('.facts .badge').first();
const backgroundOf = (p: Page) => badge(p).evaluate((b) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(b).backgroundColor);
const idInUrl = (p: Page) => Number(/executions\/(\d+)/.exec(p.url())![1]);

describe('execution controls (SVC_AUTH=none)', () => {
  let stack: TestStack;
  let browser: Browser;
  let page: Page;
  let gateDir: string;
  const errors: string[] = [];
  beforeAll(async () => {
    ensureGuiBuilt();
    gateDir = mkdtempSync(join(tmpdir(), 'svc-console-control-'));
    stack = await startTestStack({ workers: 1, concurrency: 4, workerOptions: { shell: UNSANDBOXED_SHELL } });
    for (const yaml of [slow(join(gateDir, 'slow-gate')), flaky(join(gateDir, 'gate')), ADMIN_APPROVAL, TIMER, SLEEPER, GUARDED]) await stack.register(yaml);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      // The console probes routes (404); anything else logged is a defect.
      if (m.type() === 'error' && !/status of 404/.test(m.text())) errors.push(m.text());
    });
    page.on('dialog', (d) => void d.accept());
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    if (gateDir) rmSync(gateDir, { recursive: true, force: true });
  });

  it('pauses a running execution (no new step starts, its badge and the list say paused) and resumes it to the end', async () => {
    const id = await stack.run('gui/control/slow');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="first"][data-status="active"]').waitFor({ timeout: 15_000 });
    const running = await backgroundOf(page);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('status').filter({ hasText: `Execution ${id} was paused at` }).waitFor();
    await badge(page).filter({ hasText: /^paused$/ }).waitFor();
    expect(await backgroundOf(page)).not.toBe(running);
    expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(0);
    // The running command finishes; nothing after it is issued while paused.
    writeFileSync(join(gateDir, 'slow-gate'), '');
    await until('first step done', async () => (await stack.events(id)).some((e) => e.event_type === 'step.exit' && e.step === 'first'), 15_000, 100);
    await page.waitForTimeout(1_500);
    expect((await http(stack.url, 'GET', `/api/executions/${id}`)).body.status).toBe('paused');
    expect((await stack.events(id)).some((e) => e.step === 'second' && e.event_type === 'step.exit')).toBe(false);

    // The list's filter has paused, and finds it.
    await page.goto(`${stack.url}/ui/#/executions`);
    await page.getByLabel('Status').selectOption('paused');
    await page.waitForURL(/status=paused/);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: String(id), exact: true }) });
    await row.locator('.badge', { hasText: 'paused' }).waitFor();
    expect(await page.locator('table.list tbody tr').count()).toBe(1);

    await row.getByRole('link', { name: String(id), exact: true }).click();
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('status').filter({ hasText: `Execution ${id} was resumed at` }).waitFor();
    await badge(page).filter({ hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
    // What the action did stays in the past tense: 'is running again' stood beside the completed badge.
    expect(await page.getByRole('status').filter({ hasText: `Execution ${id}` }).textContent()).toMatch(new RegExp(`^Execution ${id} was resumed at [0-9:]+\\.$`));
    expect(await stepStatuses(page)).toEqual({ first: 'completed', second: 'completed', third: 'completed' });
    const types = (await stack.events(id)).map((e) => e.event_type);
    expect(types).toContain('execution.paused');
    expect(types).toContain('execution.resumed');
  });

  it('retries a failed execution from its failed step, shows the new one, and links both ways', async () => {
    const id = await stack.run('gui/control/flaky');
    expect((await stack.wait(id)).status).toBe('failed');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await badge(page).filter({ hasText: /^failed$/ }).waitFor();
    const select = page.getByLabel('Retry from step');
    // The steps it reached (finish, after the failure, is one the server's retry refuses), the failed one chosen.
    await expect.poll(() => select.locator('option').allTextContents()).toEqual(['prepare', 'flaky (failed)']);
    expect(await select.inputValue()).toBe('flaky');
    expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);

    writeFileSync(join(gateDir, 'gate'), '');
    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.waitForURL((u) => /#\/executions\/\d+$/.test(u.hash) && !u.hash.endsWith(`/${id}`));
    const retried = idInUrl(page);
    const back = page.getByRole('definition').getByRole('link', { name: `execution ${id}`, exact: true });
    await back.waitFor();
    expect(await page.getByRole('term').filter({ hasText: 'Retry of' }).count()).toBe(1);
    await badge(page).filter({ hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
    const types = (await stack.events(retried)).map((e) => `${e.event_type}:${e.step ?? ''}`);
    expect(types).toContain('step.replayed:prepare');

    await back.click();
    await page.waitForURL((u) => u.hash.endsWith(`/executions/${id}`));
    await page.getByRole('term').filter({ hasText: 'Retried as' }).waitFor();
    // Retried again, from its first step: both retries are linked, oldest first.
    await page.getByLabel('Retry from step').selectOption('prepare');
    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.waitForURL((u) => /#\/executions\/\d+$/.test(u.hash) && !u.hash.endsWith(`/${id}`));
    const again = idInUrl(page);
    expect(again).not.toBe(retried);
    await badge(page).filter({ hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
    await page.getByRole('definition').getByRole('link', { name: `execution ${id}`, exact: true }).click();
    await page.waitForURL((u) => u.hash.endsWith(`/executions/${id}`));
    const forward = page.getByRole('definition').filter({ has: page.getByRole('link', { name: `execution ${retried}`, exact: true }) });
    await forward.waitFor();
    expect(await forward.getByRole('link').allInnerTexts()).toEqual([`execution ${retried}`, `execution ${again}`]);
    await forward.getByRole('link', { name: `execution ${retried}`, exact: true }).click();
    await page.waitForURL((u) => u.hash.endsWith(`/executions/${retried}`));
  });

  it('sends a signal through the form (a JSON object only) and the execution goes on', async () => {
    const id = await stack.run('gui/control/approval');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const waiting = page.getByRole('region', { name: 'Waiting' });
    const wait = waiting.getByRole('listitem', { name: 'wait of approve' });
    await wait.waitFor({ timeout: 15_000 });
    expect(await wait.locator('dd').allInnerTexts()).toEqual(['approve waiting', 'signal approval', 'role admin', expect.stringMatching(/\(in (59 min \d\d s|1 h 00 min 00 s)\)$/), expect.stringMatching(/\d\d:\d\d/)]);
    await page.locator('svg.graph [data-step="approve"][data-status="waiting"]').waitFor();
    expect(await page.getByRole('term').filter({ hasText: /^Retr/ }).count()).toBe(0);
    const form = page.getByRole('form', { name: 'Send signal approval' });
    const payload = form.getByLabel('Payload (JSON object)');
    const send = form.getByRole('button', { name: 'Send approval' });
    await payload.fill('[true]');
    await form.getByText('Not sent: the payload must be a JSON object').waitFor();
    expect(await send.isDisabled()).toBe(true);
    await payload.fill('{"approved": tru');
    expect(await send.isDisabled()).toBe(true);
    await payload.fill('{"approved": true}');
    await send.click();
    await waiting.getByRole('status').filter({ hasText: /^Signal approval delivered to step approve \(event #\d+\)\.$/ }).waitFor();
    await badge(page).filter({ hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
    expect(await stepStatuses(page)).toMatchObject({ approve: 'completed', deploy: 'completed' });
    await waiting.getByText('No step is waiting now.').waitFor();
    const received = (await stack.events(id)).find((e) => e.event_type === 'signal.received');
    expect(JSON.stringify(received)).toContain('"approved":true');
  });

  it('shows when a timer wakes, counting down; cancels with a reason, not cascading', async () => {
    const id = await stack.run('gui/control/timer');
    const wakeAt = await until('the timer is set', async () => {
      const e = (await http(stack.url, 'GET', `/api/executions/${id}`)).body;
      return e.waits?.[0]?.wake_at as string | undefined;
    });
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const wait = page.getByRole('region', { name: 'Waiting' }).getByRole('listitem', { name: 'wait of cool_down' });
    await wait.waitFor();
    expect(await wait.locator('time').getAttribute('dateTime')).toBe(wakeAt);
    expect(await wait.locator('dd').nth(1).innerText()).toBe('a timer');
    const countdown = wait.locator('.countdown');
    const first = await countdown.innerText();
    expect(first).toMatch(/^\(in (29 min \d\d s|30 min 00 s)\)$/);
    await expect.poll(() => countdown.innerText(), { timeout: 5_000 }).not.toBe(first);
    expect(await wait.getByRole('form').count()).toBe(0);
    await page.locator('svg.graph [data-step="cool_down"][data-status="waiting"]').waitFor();

    await page.getByLabel('Cancel reason').fill('not needed tonight');
    const cascade = page.getByLabel('cascade to child executions');
    expect(await cascade.isChecked()).toBe(true);
    await cascade.uncheck();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await badge(page).filter({ hasText: /^cancelled$/ }).waitFor({ timeout: 15_000 });
    const cancelled = (await stack.events(id)).find((e) => e.event_type === 'execution.cancelled');
    expect(cancelled.context).toMatchObject({ reason: 'not needed tonight', cascade: false });
    expect(errors).toEqual([]);
  });

  it('names a playbook task\'s own timer by what it is for, not as a plain timer', async () => {
    const id = await stack.run('gui/control/guarded');
    const wakeAt = await until('the task\'s timeout is set', async () => {
      const e = (await http(stack.url, 'GET', `/api/executions/${id}`)).body;
      return e.waits?.[0]?.for === 'timeout' ? (e.waits[0].wake_at as string) : undefined;
    });
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const wait = page.getByRole('region', { name: 'Waiting' }).getByRole('listitem', { name: 'wait of call' });
    await wait.waitFor();
    expect(await wait.locator('dd').nth(1).innerText()).toBe('the timeout of task kid, attempt 1');
    expect(await wait.locator('dt').nth(2).innerText()).toBe('Times out');
    expect(await wait.locator('time').getAttribute('dateTime')).toBe(wakeAt);
    expect((await http(stack.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'seen' })).status).toBe(200);
    expect(errors).toEqual([]);
  });
});

describe('who may send a signal (behind the gateway)', () => {
  const SECRET = 'gateway-secret-for-the-control-test-0123456789';
  let idp: TestProvider;
  let stack: TestStack;
  let gw: TestGateway;
  let consoleStack: ConsoleStack | undefined;
  let browser: Browser;
  let pub: string;
  let admin: Record<string, string>;
  const errors: string[] = [];
  beforeAll(async () => {
    ensureGuiBuilt();
    consoleStack = await startConsoleStack(SECRET);
    ({ idp, stack, gw, pub } = consoleStack);
    admin = bearer(await createApiToken(stack.deps.db, 'control-admin', 'admin'));
    for (const content of [ADMIN_APPROVAL, ANY_OPERATOR, SPACED_APPROVAL]) {
      const reg = await http(stack.url, 'POST', '/api/catalog/playbook', { content }, admin);
      expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    }
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await consoleStack?.close();
  });

  const start = async (path: string): Promise<number> => {
    const r = await http(stack.url, 'POST', '/api/run/playbook', { path, payload: {} }, admin);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await until(`execution ${r.body.execution_id} waits`, async () => (await http(stack.url, 'GET', `/api/executions/${r.body.execution_id}`, undefined, admin)).body.waits?.length > 0);
    return r.body.execution_id;
  };

  /** Opens the console at the gateway and signs `login` in through the provider's own pages. */
  async function signIn(context: BrowserContext, login: string): Promise<Page> {
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
    return page;
  }

  /** The signal form of execution `id` as `page` sees it: whether it is disabled, the reason shown, and what its aria-describedby says (a screen reader's description). */
  async function formOf(page: Page, id: number, signal: string) {
    await page.goto(`${pub}/#/executions/${id}`);
    const form = page.getByRole('form', { name: `Send signal ${signal}` });
    await form.waitFor();
    const disabled = await form.getByRole('button', { name: `Send ${signal}` }).isDisabled();
    // The element's own document: the tests are typed without the DOM's globals.
    const described = await form.locator('fieldset').evaluate((f) => (f.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean).map((id: string) => f.ownerDocument.getElementById(id)?.textContent ?? '').join(' '));
    return { form, disabled, textareaDisabled: await form.getByLabel('Payload (JSON object)').isDisabled(), reason: (await form.locator('p.muted').allInnerTexts()).join(''), described };
  }

  it('a viewer, and an operator where the approval wants an admin, see the form disabled with the reason; an operator sends one any operator may', async () => {
    const approvalId = await start('gui/control/approval');
    const goId = await start('gui/control/go');
    const spacedId = await start('gui/control/spaced');

    const viewerContext = await browser.newContext();
    const viewer = await signIn(viewerContext, 'victor');
    expect(await formOf(viewer, approvalId, 'approval')).toMatchObject({ disabled: true, textareaDisabled: true, reason: 'This approval needs the role admin; you are viewer.', described: 'This approval needs the role admin; you are viewer.' });
    expect(await formOf(viewer, spacedId, 'sign')).toMatchObject({ disabled: true, reason: 'This approval needs the role admin; you are viewer.', described: 'This approval needs the role admin; you are viewer.' });
    expect(await viewer.getByRole('group', { name: 'Controls' }).count()).toBe(0);
    expect(await formOf(viewer, goId, 'go')).toMatchObject({ disabled: true, reason: 'Sending a signal needs the operator role; you are viewer.' });
    await viewerContext.close();

    const operatorContext = await browser.newContext();
    const operator = await signIn(operatorContext, 'olivia');
    expect(await formOf(operator, approvalId, 'approval')).toMatchObject({ disabled: true, textareaDisabled: true, reason: 'This approval needs the role admin; you are operator.' });
    await operator.getByRole('group', { name: 'Controls' }).getByRole('button', { name: 'Pause' }).waitFor();
    const go = await formOf(operator, goId, 'go');
    expect(go).toMatchObject({ disabled: false, textareaDisabled: false, reason: '' });
    await go.form.getByLabel('Payload (JSON object)').fill('{"approved": false}');
    await go.form.getByRole('button', { name: 'Send go' }).click();
    await operator.getByRole('status').filter({ hasText: /^Signal go delivered to step approve/ }).waitFor();
    await operator.locator('.facts .badge', { hasText: /^completed$/ }).waitFor({ timeout: 20_000 });
    expect((await stepStatuses(operator)).rejected).toBe('completed');
    const received = (await http(stack.url, 'GET', `/api/events/${goId}`, undefined, admin)).body.events.find((e: { event_type: string }) => e.event_type === 'signal.received');
    expect(JSON.stringify(received.context)).toContain('olivia');
    await operatorContext.close();
    // The admin's approval is still waiting: nothing was sent for it.
    expect((await http(stack.url, 'GET', `/api/executions/${approvalId}`, undefined, admin)).body.status).toBe('running');
    expect(errors).toEqual([]);
  }, 90_000);
});
