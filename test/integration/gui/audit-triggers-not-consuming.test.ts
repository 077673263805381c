// The console's triggers page says why a NATS trigger takes no messages (GET /api/triggers'
// subscription_problem, docs/nats-triggers.md): "active" alone read as consuming while its stream
// was missing. A trigger that consumes shows nothing more.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteSubscriptionProblem } from '../../../src/db/trigger.repo.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: orders, path: gui/triggers/orders }
workload: { order: null }
triggers:
  - { name: missing, kind: nats, auth: nats_auth, stream: ORDERS, subject: orders.created, payload: { order: "{{ message.json }}" } }
  - { name: fine, kind: nats, auth: nats_auth, stream: ORDERS, subject: orders.paid, payload: { order: "{{ message.json }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let t: TestApp;
let browser: Browser;
let page: Page;
const errors: string[] = [];
beforeAll(async () => {
  ensureGuiBuilt();
  t = await startTestApp();
  const reg = await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('console triggers page', () => {
  it('shows why a NATS trigger is not consuming, under its state', async () => {
    // As a server's subscription notes it (nats-subscriptions.ts) when the stream is not there.
    await noteSubscriptionProblem(t.deps.db, { path: 'gui/triggers/orders', name: 'missing' }, 'stream not found');
    await page.goto(`${t.url}/ui/#/triggers`);
    const missing = page.getByRole('row', { name: 'missing of gui/triggers/orders' });
    await missing.waitFor();
    const state = missing.getByRole('cell').nth(3);
    await expect.poll(() => state.innerText()).toMatch(/^active\nnot consuming since \d.* ago: stream not found$/);
    expect(await state.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    const fine = page.getByRole('row', { name: 'fine of gui/triggers/orders' });
    expect(await fine.getByRole('cell').nth(3).innerText()).toBe('active');
    expect(errors).toEqual([]);
  });
});
