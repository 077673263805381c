// The web console in a real browser (Debian's chromium via playwright-core) against a real server,
// worker and PostgreSQL: register through the editor (a validation problem first, at its line),
// run, watch the statechart light each step until completion, read the timeline, cancel a long
// run, see a failed step coloured. Screenshots for docs/gui.md (SVC_UPDATE_SCREENSHOTS=1 writes
// them into docs/). No console errors.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt, screenshotPath } from '../../helpers/gui-build.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const shot = (page: Page, name: string) => page.screenshot({ path: screenshotPath(name), fullPage: true });

// The playbook registered through the editor; each step sleeps so the live view can see it active.
const GOOD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: pipeline, path: demo/pipeline }
workload: { who: console }
workflow:
  - step: start
    tool: [ { name: greet, kind: shell, command: "sleep 1.5; echo hello {{ workload.who }}" } ]
    next: transform
  - step: transform
    tool: [ { name: work, kind: shell, command: "sleep 1.5; echo 42" } ]
    next:
      - { step: report, when: "{{ outcome.status == 'ok' }}" }
  - step: report
    tool: [ { name: sum, kind: shell, command: "sleep 1.5; echo done" } ]
`;
// The same with an arc to a step that does not exist, on line BAD_LINE.
const BAD = GOOD.replace('next: transform', 'next: transfrom');
const BAD_LINE = BAD.split('\n').findIndex((l) => l.includes('next: transfrom')) + 1;

let stack: TestStack;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 1, concurrency: 4 });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (m) => {
    // The console probes routes other branches add (404) and shows refusals it asked for (400):
    // chromium logs each such answer; anything else is a defect.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of (400|404)/.test(m.text())) consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  // Nothing comes from outside the machine: every request goes to the server itself.
  page.on('request', (r) => {
    if (!r.url().startsWith(stack.url) && !r.url().startsWith('data:')) consoleErrors.push(`foreign request: ${r.url()}`);
  });
  page.on('dialog', (d) => void d.accept());
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

/** Status of every step box of the statechart on the page. */
const stepStatuses = (p: Page) =>
  p.$$eval('svg.graph [data-step]', (nodes) => Object.fromEntries(nodes.map((n) => [n.getAttribute('data-step'), n.getAttribute('data-status')])));

describe('web console', () => {
  it('is served at /ui/ with runtime settings that let SVC_AUTH=none skip authentication', async () => {
    const cfg = await http(stack.url, 'GET', '/ui/runtime-config.json');
    expect(cfg.body).toEqual({ auth: 'none', api_base: '/api', login_url: null, logout_url: null, me_url: null, allow_skip_auth: true });
    await page.goto(`${stack.url}/ui/`);
    await page.getByRole('navigation', { name: 'Sections' }).getByText('Executions').waitFor();
    await page.getByText('No executions yet.').waitFor();
    // The first view (the list, answered by the API) renders within a second of navigation on
    // loopback, timed by the page itself; the first load above warmed the browser up.
    // The best of three loads: the machine's other work (tests share two cores) only adds noise.
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      await page.reload({ waitUntil: 'commit' });
      const shown = await page.waitForFunction("document.body.innerText.includes('No executions yet.') && performance.now()", undefined, { polling: 'raf' });
      times.push(Number(await shown.jsonValue()));
    }
    expect(Math.min(...times), times.join(', ')).toBeLessThan(1_000);
  });

  it('registers a playbook through the editor, showing the server’s validation problem at its line first', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/new`);
    const editor = page.getByLabel('Playbook YAML');
    await editor.fill(BAD);
    await page.getByRole('button', { name: 'Register' }).click();
    const problem = page.locator('.problems li').first();
    await problem.waitFor();
    expect(await problem.getAttribute('data-line')).toBe(String(BAD_LINE));
    expect(await problem.textContent()).toContain('transfrom');
    // The same line is marked in the YAML view.
    expect(await page.locator(`.yl.has-problem[data-line="${BAD_LINE}"]`).count()).toBe(1);
    await shot(page, 'editor-problem');

    await editor.fill(GOOD);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL(/#\/catalog\/entry\/demo%2Fpipeline\?version=1$/);
    await page.locator('svg.graph [data-step="report"]').waitFor();
    expect(await page.locator('.y-key').first().textContent()).toContain('apiVersion');
    await shot(page, 'catalog-entry');
  });

  it('marks a problem at the line the server names, inside a mapping written across lines too', async () => {
    // The server places `bogus` at its own line, not at the line its step begins on.
    const flow = GOOD.replace(
      '  - step: report\n    tool: [ { name: sum, kind: shell, command: "sleep 1.5; echo done" } ]\n',
      '  - { step: report,\n      tool: { name: sum, kind: shell,\n              command: "echo done",\n              bogus: 1 } }\n',
    );
    const flowLine = flow.split('\n').findIndex((l) => l.includes('bogus: 1')) + 1;
    expect(flowLine).toBeGreaterThan(0);
    await page.goto(`${stack.url}/ui/#/catalog/new`);
    await page.getByLabel('Playbook YAML').fill(flow);
    await page.getByRole('button', { name: 'Register' }).click();
    const problem = page.locator('.problems li').first();
    await problem.waitFor();
    expect(await problem.textContent()).toContain('bogus');
    expect(await problem.getAttribute('data-line')).toBe(String(flowLine));
    expect(await page.locator(`.yl.has-problem[data-line="${flowLine}"]`).count()).toBe(1);
    await page.goto(`${stack.url}/ui/#/catalog/entry/demo%2Fpipeline`);
    await page.locator('svg.graph [data-step="report"]').waitFor();
  });

  it('runs it with a payload, and the statechart lights each step until completion', async () => {
    await page.getByLabel('Payload (JSON, merged into the workload)').fill('{"who": "a browser"');
    expect(await page.getByRole('button', { name: 'Run version 1' }).isDisabled()).toBe(true);
    await page.getByLabel('Payload (JSON, merged into the workload)').fill('{"who": "a browser"}');
    // Live updates come by the inspection WebSocket (polling /state only when it cannot open).
    const sockets: string[] = [];
    const onSocket = (ws: { url(): string }) => sockets.push(ws.url());
    page.on('websocket', onSocket);
    await page.getByRole('button', { name: 'Run version 1' }).click();
    await page.waitForURL(/#\/executions\/\d+$/);
    const executionId = Number(/executions\/(\d+)/.exec(page.url())![1]);

    const seenActive = new Set<string>();
    let sawRunning = false;
    await until('every step completed', async () => {
      const statuses = await stepStatuses(page);
      for (const [step, status] of Object.entries(statuses)) if (status === 'active') seenActive.add(step!);
      if (seenActive.size === 1 && !sawRunning) {
        sawRunning = true;
        await shot(page, 'execution-running');
      }
      return Object.values(statuses).length === 3 && Object.values(statuses).every((s) => s === 'completed');
    }, 30_000, 100);
    expect([...seenActive].sort()).toEqual(['report', 'start', 'transform']);
    page.off('websocket', onSocket);
    expect(sockets).toContain(`${stack.url.replace(/^http/, 'ws')}/api/executions/${executionId}/inspect`);
    await page.locator('.facts .badge', { hasText: 'completed' }).waitFor();
    // The path taken: every arc between steps that ran is drawn as taken.
    expect(await page.locator('svg.graph .edge.taken').count()).toBeGreaterThanOrEqual(4);
    expect(await page.locator('.outcome').textContent()).toContain('Result');
    const api = await stack.wait(executionId);
    expect(api.status).toBe('completed');
    await shot(page, 'execution-completed');
  });

  it('opens the timeline of a step, with its context and result folded', async () => {
    await page.locator('svg.graph [data-step="start"]').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Timeline of start' }).waitFor();
    const exit = page.locator('.timeline li.ev-step-exit');
    await exit.waitFor();
    const result = exit.locator('details', { hasText: 'result' });
    expect(await result.evaluate((d) => (d as unknown as { open: boolean }).open)).toBe(false);
    await result.locator('summary').click();
    expect(await result.locator('pre').textContent()).toContain('hello a browser');
    // Every event shown is the chosen step's.
    const steps = await page.locator('.timeline .ev-step').allTextContents();
    expect(steps.length).toBeGreaterThan(1);
    expect(new Set(steps)).toEqual(new Set(['start']));
    await shot(page, 'timeline');
  });

  it('re-runs an execution with the same payload', async () => {
    const first = Number(/executions\/(\d+)/.exec(page.url())![1]);
    await page.getByRole('button', { name: 'Re-run' }).click();
    await page.waitForURL((u) => /#\/executions\/(\d+)$/.test(u.hash) && !u.hash.endsWith(`/${first}`));
    const second = Number(/executions\/(\d+)/.exec(page.url())![1]);
    expect((await stack.wait(second)).status).toBe('completed');
    const started = (await stack.events(second)).find((e) => e.event_type === 'execution.started');
    expect(started.context.input.args).toEqual({ who: 'a browser' });
  });

  it('lists executions with a status filter', async () => {
    await page.goto(`${stack.url}/ui/#/executions?status=completed`);
    await page.locator('table.list tbody tr').first().waitFor();
    await page.locator('table.list tbody tr').nth(1).waitFor();
    expect(await page.locator('table.list tbody tr').count()).toBe(2);
    await page.goto(`${stack.url}/ui/#/executions?status=failed`);
    await page.getByText('No executions match.').waitFor();
  });

  it('searches executions by id or path text, and filters by caller, trigger and start time', async () => {
    await page.goto(`${stack.url}/ui/#/executions`);
    const rows = page.locator('table.list tbody tr');
    await rows.nth(1).waitFor();
    const newest = (await rows.first().locator('td').first().textContent())?.trim() ?? '';
    const search = page.getByLabel('Search');
    await search.fill(newest);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => u.hash.includes(`q=${newest}`));
    await expect.poll(() => rows.count()).toBe(1);
    expect((await rows.first().locator('td').first().textContent())?.trim()).toBe(newest);
    await search.fill('PIPELINE');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    await search.fill('no/such/text');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No executions match.').waitFor();
    await search.fill('');
    await page.getByLabel('Started by').fill('local');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => u.hash.includes('requested_by=local') && !u.hash.includes('q='));
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByLabel('Trigger').fill('nightly');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No executions match.').waitFor();
    await page.getByLabel('Trigger').fill('');
    // An hour from now, in the input's local time: the list asks for an ISO time with a zone.
    const later = new Date(Date.now() + 3_600_000);
    const local = (n: number) => String(n).padStart(2, '0');
    await page.getByLabel('Started after').fill(`${later.getFullYear()}-${local(later.getMonth() + 1)}-${local(later.getDate())}T${local(later.getHours())}:${local(later.getMinutes())}`);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => /started_after=\d{4}-\d\d-\d\dT[\d%A:.]+Z/.test(u.hash));
    await page.getByText('No executions match.').waitFor();
    // An execution's page says who started it, linking to the list of what they started.
    await page.goto(`${stack.url}/ui/#/executions/${newest}`);
    const by = page.getByRole('definition').filter({ has: page.getByRole('link', { name: 'local', exact: true }) });
    await by.waitFor();
    await by.getByRole('link').click();
    await page.waitForURL((u) => u.hash.endsWith('#/executions?requested_by=local'));
  });

  it('cancels a long run from its page', async () => {
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: long, path: demo/long }
workflow:
  - step: start
    tool: [ { name: wait, kind: shell, command: "sleep 60" } ]
`);
    const id = await stack.run('demo/long');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    await page.locator('svg.graph [data-step="start"][data-status="active"]').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('.facts .badge', { hasText: 'cancelled' }).waitFor({ timeout: 15_000 });
    await page.locator('svg.graph [data-step="start"][data-status="cancelled"]').waitFor();
    expect((await stack.wait(id)).status).toBe('cancelled');
    expect(await page.getByRole('button').allTextContents()).not.toContain('Cancel');
  });

  it('colours a failed step and shows the error', async () => {
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: broken, path: demo/broken }
workflow:
  - step: start
    tool: [ { name: ok, kind: shell, command: "echo fine" } ]
    next: fail
  - step: fail
    tool: [ { name: boom, kind: shell, command: "echo broken >&2; exit 3" } ]
`);
    const id = await stack.run('demo/broken');
    await page.goto(`${stack.url}/ui/#/executions/${id}`);
    const failed = page.locator('svg.graph [data-step="fail"][data-status="failed"] rect');
    await failed.waitFor({ timeout: 20_000 });
    const ok = page.locator('svg.graph [data-step="start"][data-status="completed"] rect');
    const [failFill, okFill] = [await failed.evaluate((r) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(r).fill), await ok.evaluate((r) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(r).fill)];
    expect(failFill).not.toBe(okFill);
    expect(failFill).toMatch(/^rgb\((\d+), (\d+), (\d+)\)$/);
    const [red, green] = /rgb\((\d+), (\d+)/.exec(failFill)!.slice(1).map(Number);
    expect(red).toBeGreaterThan(green);
    await page.locator('.outcome.failed').waitFor();
    await shot(page, 'execution-failed');
  });

  it('simulates a catalog entry in the browser, the user choosing each step’s outcome', async () => {
    await page.goto(`${stack.url}/ui/#/catalog/entry/demo%2Fpipeline`);
    await page.getByLabel('Simulate in the browser').check();
    // The playbook's own statechart decides the arcs (simulatePlaybook, bundled): the user only the outcomes.
    await page.getByRole('group', { name: 'start ends with' }).getByRole('button', { name: 'ok' }).click();
    await page.locator('svg.graph [data-step="transform"][data-status="active"]').waitFor();
    await page.getByRole('group', { name: 'transform ends with' }).getByRole('button', { name: 'ok' }).click();
    await page.getByRole('group', { name: 'report ends with' }).getByRole('button', { name: 'ok' }).click();
    await page.getByText('Simulated execution completed.').waitFor();
    await page.getByText('Path: start → transform → report').waitFor();
    expect(Object.values(await stepStatuses(page))).toEqual(['completed', 'completed', 'completed']);
    await shot(page, 'simulation');
    await page.getByRole('button', { name: 'Restart' }).click();
    await page.getByRole('group', { name: 'start ends with' }).getByRole('button', { name: 'error' }).click();
    await page.getByText('Simulated execution failed.').waitFor();
    expect((await stepStatuses(page)).start).toBe('failed');
    // Nothing ran: no execution was started by the simulation (two ran before: the run and its re-run).
    expect((await http(stack.url, 'GET', '/api/executions?path=demo/pipeline')).body.count).toBe(2);
  });

  it('simulates a wait as the machine answers it: a timer fires, a signal arrives or times out', async () => {
    const waits = `apiVersion: svc/v1
kind: Playbook
metadata: { name: waits, path: demo/waits }
workflow:
  - step: start
    tool: { name: build, kind: shell, command: "echo built" }
    next: cool_down
  - step: cool_down
    wait: { for: 30m }
    next: approve
  - step: approve
    wait: { signal: approval, timeout: 24h }
    next:
      - { step: deploy, when: "{{ outcome.status == 'ok' }}" }
      - { step: expired, when: "{{ outcome.status == 'timeout' }}" }
  - step: deploy
    tool: { name: deploy, kind: shell, command: "echo deploy" }
  - step: expired
    tool: { name: note, kind: shell, command: "echo expired" }
`;
    expect((await http(stack.url, 'POST', '/api/catalog/playbook', { content: waits })).status).toBe(201);
    await page.goto(`${stack.url}/ui/#/catalog/entry/demo%2Fwaits`);
    await page.getByLabel('Simulate in the browser').check();
    await page.getByRole('group', { name: 'start ends with' }).getByRole('button', { name: 'ok' }).click();
    // A timer only fires: no error to choose that the simulation would not make.
    const timer = page.getByRole('group', { name: 'cool_down waits for its timer' });
    expect(await timer.getByRole('button').allTextContents()).toEqual(['timer fires']);
    await timer.getByRole('button', { name: 'timer fires' }).click();
    const signal = page.getByRole('group', { name: 'approve waits for signal approval' });
    expect(await signal.getByRole('button').allTextContents()).toEqual(['signal arrives', 'times out']);
    await signal.getByRole('button', { name: 'times out' }).click();
    await page.locator('svg.graph [data-step="expired"][data-status="active"]').waitFor();
    await page.getByRole('group', { name: 'expired ends with' }).getByRole('button', { name: 'ok' }).click();
    await page.getByText('Simulated execution completed.').waitFor();
    await page.getByText('Path: start → cool_down → approve → expired').waitFor();
    await page.getByRole('button', { name: 'Restart' }).click();
    await page.getByRole('group', { name: 'start ends with' }).getByRole('button', { name: 'ok' }).click();
    await page.getByRole('button', { name: 'timer fires' }).click();
    await page.getByRole('button', { name: 'signal arrives' }).click();
    await page.getByRole('group', { name: 'deploy ends with' }).getByRole('button', { name: 'ok' }).click();
    await page.getByText('Path: start → cool_down → approve → deploy').waitFor();
  });

  it('says an execution is not there once, without asking again each second', async () => {
    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (/\/api\/executions\/(999999|abc|NaN)/.test(r.url())) asked.push(r.url());
    };
    const sockets: string[] = [];
    const onSocket = (ws: { url(): string }) => sockets.push(ws.url());
    page.on('request', onRequest);
    page.on('websocket', onSocket);
    try {
      await page.goto(`${stack.url}/ui/#/executions/999999`);
      await page.getByText('404: execution 999999 not found').waitFor();
      await page.waitForTimeout(3_000);
      // The first read, and the one its stop makes: not one a second for as long as the tab is open.
      expect(asked.length, asked.join('\n')).toBeLessThanOrEqual(2);
      expect(sockets).toEqual([]); // no inspection stream for it either
      asked.length = 0;
      await page.goto(`${stack.url}/ui/#/executions/abc`);
      await page.getByText('No execution “abc”: an execution id is a number.').waitFor();
      expect(asked).toEqual([]);
      expect(sockets).toEqual([]);
    } finally {
      page.off('request', onRequest);
      page.off('websocket', onSocket);
    }
  });

  it('opens a link written as a path (/ui/catalog/new, /ui/executions?status=failed) at the route it names, not a blank page', async () => {
    await page.goto(`${stack.url}/ui/catalog/new`);
    await page.getByRole('heading', { name: 'Register a playbook' }).waitFor();
    expect(page.url()).toBe(`${stack.url}/ui/#/catalog/new`);
    await page.goto(`${stack.url}/ui/executions?status=failed`);
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    expect(page.url()).toBe(`${stack.url}/ui/#/executions?status=failed`);
    expect(await page.getByLabel('Status').inputValue()).toBe('failed');
  });

  it('edits an MCP server document as one, and offers no run for it', async () => {
    const doc = 'apiVersion: svc/v1\nkind: Mcp\nmetadata:\n  name: tools\n  path: mcp/tools\nendpoint: http://127.0.0.1:9/mcp\n';
    expect((await http(stack.url, 'POST', '/api/catalog/register', { content: doc, resource_type: 'mcp' })).status).toBe(201);
    await page.goto(`${stack.url}/ui/#/catalog/entry/mcp%2Ftools`);
    await page.getByText('An MCP server: deploy it and call its tools from').waitFor();
    expect(await page.getByRole('button', { name: /^Run version/ }).count()).toBe(0);
    await page.getByRole('link', { name: 'Edit' }).click();
    const editor = page.getByLabel('Playbook YAML');
    await expect.poll(() => editor.inputValue()).toContain('kind: Mcp');
    await editor.fill(doc.replace('127.0.0.1:9/mcp', '127.0.0.1:10/mcp'));
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL(/#\/catalog\/entry\/mcp%2Ftools\?version=2$/);
    expect((await http(stack.url, 'GET', '/api/catalog/playbook/mcp/tools')).body).toMatchObject({ kind: 'mcp', version: 2 });
  });

  it('shows worker pools and finds stuck executions with a dry run before cancelling', async () => {
    await page.goto(`${stack.url}/ui/#/operations`);
    await page.getByRole('region', { name: 'Worker pools' }).locator('tbody tr').first().waitFor();
    await page.getByRole('button', { name: 'Find (dry run)' }).click();
    await page.getByText('No execution has been running for more than 5 minutes.').waitFor();

    // A batch request (as a worker sends one) followed by its id until it settles.
    const batch = await http(stack.url, 'POST', '/api/events/batch', { execution_id: 1, events: [{ event_type: 'command.heartbeat' }] }, asWorker);
    expect(batch.status, JSON.stringify(batch.body)).toBe(202);
    await page.getByLabel('Request id').fill(batch.body.request_id);
    await page.getByRole('button', { name: 'Follow' }).click();
    await page.getByRole('region', { name: 'Batch requests' }).locator('.badge', { hasText: /^(completed|failed)$/ }).waitFor();

    // A credential made here: its data goes to the server once and is never shown or logged.
    const secret = 'console-secret-7f3a9c';
    const form = page.getByRole('form', { name: 'New credential' });
    await form.getByLabel('Name').fill('console_auth');
    // The form follows the type (GET /api/credential-types): a bearer credential asks for its token.
    await form.getByLabel('token', { exact: true }).fill(secret);
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('region', { name: 'Credentials' }).getByRole('cell', { name: 'console_auth' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(stack.logs.join('')).not.toContain(secret);
    const stored = await http(stack.url, 'GET', '/api/credentials/console_auth?include_data=true');
    expect(stored.body.data).toEqual({ token: secret });
    // Edit: a new token, merged in (PATCH); the stored one is never shown.
    const rotated = 'console-rotated-2b8d1e';
    await page.getByRole('region', { name: 'Credentials' }).getByRole('row', { name: /console_auth/ }).getByRole('button', { name: 'Edit' }).click();
    const editForm = page.getByRole('form', { name: 'Edit credential' });
    await editForm.getByLabel('token', { exact: true }).fill(rotated);
    await editForm.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('form', { name: 'New credential' }).waitFor();
    expect((await http(stack.url, 'GET', '/api/credentials/console_auth?include_data=true')).body.data).toEqual({ token: rotated });
    expect(await page.content()).not.toContain(rotated);
    await shot(page, 'operations');
    await page.getByRole('region', { name: 'Credentials' }).getByRole('row', { name: /console_auth/ }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('region', { name: 'Credentials' }).getByRole('cell', { name: 'console_auth' }).waitFor({ state: 'detached' });
    expect((await http(stack.url, 'GET', '/api/credentials/console_auth')).status).toBe(404);
  });

  it('follows the system’s dark setting and is usable from the keyboard', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${stack.url}/ui/#/executions`);
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    const background = () => page.evaluate('getComputedStyle(document.body).backgroundColor');
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await background();
    expect(light).not.toBe(dark);
    const channels = (c: unknown) => String(c).match(/\d+/g)!.slice(0, 3).map(Number);
    expect(Math.max(...channels(dark))).toBeLessThan(64);
    expect(Math.min(...channels(light))).toBeGreaterThan(192);
    await shot(page, 'dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // Tab from the top reaches the sections; Enter follows a link; a step of the graph takes focus.
    await page.reload();
    await page.getByRole('heading', { name: 'Executions' }).waitFor();
    const focusedText = () => page.evaluate('document.activeElement && document.activeElement.textContent');
    let reached = false;
    for (let i = 0; i < 8 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await focusedText()) === 'Catalog';
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/catalog$/);
    await page.getByRole('heading', { name: 'Catalog' }).waitFor();

    // 200 % zoom of a 1280 px window is a 640 px wide layout: the page reflows instead of scrolling
    // sideways (wide tables and graphs scroll inside their own panel).
    await page.setViewportSize({ width: 640, height: 900 });
    for (const view of ['executions', 'executions/1', 'catalog/entry/demo%2Fpipeline', 'operations']) {
      await page.goto(`${stack.url}/ui/#/${view}`);
      await page.locator('h2').first().waitFor();
      await page.waitForTimeout(300);
      const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
      expect(overflow, view).toBeLessThanOrEqual(0);
    }
    await shot(page, 'zoom-200');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('wrote nothing to the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
