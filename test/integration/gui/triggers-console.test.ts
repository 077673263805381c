// The console's triggers view in a real browser against a real server: a playbook registered with
// a schedule trigger is listed with its next fires and its last result (a link to the execution a
// fire by hand started); Pause shows it paused, Resume active again; the execution's page says
// which trigger started it and links back; the catalog page lists the playbook's triggers. No
// console errors.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: nightly, path: gui/triggers/nightly }
workload: { day: none }
triggers:
  - name: nightly
    kind: schedule
    description: the nightly load
    cron: "30 3 * * *"
    timezone: Europe/Berlin
    payload: { day: "{{ trigger.scheduled_time.split('T')[0] }}" }
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
    if (m.type() === 'error' && !/status of 404/.test(m.text())) errors.push(m.text());
  });
  page.on('dialog', (d) => void d.accept());
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('console triggers view', () => {
  it('lists a schedule with its next fires and last result; pauses and resumes it; the execution says which trigger started it', async () => {
    const fired = await http(t.url, 'POST', '/api/triggers/gui/triggers/nightly/nightly/fire', {});
    expect(fired.status, JSON.stringify(fired.body)).toBe(202);
    const executionId: number = fired.body.execution_id;

    await page.goto(`${t.url}/ui/#/triggers`);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Triggers' }).waitFor();
    const row = page.getByRole('row', { name: 'nightly of gui/triggers/nightly' });
    await row.waitFor();
    expect(await row.getByRole('cell').allInnerTexts()).toEqual([
      'gui/triggers/nightly',
      'nightly\nthe nightly load',
      expect.stringMatching(/^schedule\n30 3 \* \* \* Europe\/Berlin · overlap skip · catch-up latest$/),
      'active',
      expect.stringMatching(/^in \d.+\nin \d+ h .+\nin \d+ h .+$/),
      expect.stringMatching(new RegExp(`^#${executionId} started \\d`)),
      '1 / 0 / 0',
      'Pause\nFire now',
    ]);
    // The next fires' absolute times are there, machine-readable, and the last result links its execution.
    expect(await row.locator('time').first().getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT0[12]:30:00\.000Z$/);
    expect(await row.getByRole('link', { name: `#${executionId}` }).getAttribute('href')).toBe(`#/executions/${executionId}`);

    await page.getByRole('button', { name: 'Pause nightly of gui/triggers/nightly' }).click();
    await page.getByRole('status').filter({ hasText: 'nightly of gui/triggers/nightly is paused' }).waitFor();
    // The list is read again after the answer: the row follows.
    await expect.poll(() => row.getByRole('cell').nth(3).innerText()).toBe('paused');
    expect((await http(t.url, 'GET', '/api/triggers')).body.triggers[0]).toMatchObject({ state: 'paused', next_fires: [] });
    await page.getByRole('button', { name: 'Resume nightly of gui/triggers/nightly' }).click();
    await page.getByRole('status').filter({ hasText: 'is active' }).waitFor();
    await expect.poll(() => row.getByRole('cell').nth(3).innerText()).toBe('active');

    await row.getByRole('link', { name: `#${executionId}` }).click();
    const startedBy = page.getByRole('definition').filter({ hasText: /^trigger nightly \(schedule\), fire key manual:/ });
    await startedBy.waitFor();
    await startedBy.getByRole('link', { name: 'nightly' }).click();
    await page.getByText('Trigger nightly of').waitFor();
    expect(page.url()).toMatch(/#\/triggers\?path=gui%2Ftriggers%2Fnightly&name=nightly$/);

    await page.goto(`${t.url}/ui/#/catalog/entry/gui/triggers/nightly`);
    await page.getByRole('region', { name: 'Triggers' }).getByRole('row', { name: 'nightly of gui/triggers/nightly' }).waitFor();
    expect(errors).toEqual([]);
  });
});
