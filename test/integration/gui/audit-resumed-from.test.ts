// Auto-resume's successor (restart mode) replays the steps the execution it restarted completed,
// but its page did not name that execution (GET /api/executions/{id} answers resumed_from), and
// its statechart said of the replayed step "replayed from the execution retried": there was no
// retry (retry_of null). It now says "Resumed from execution N" and where the replayed step ran.
// The execution restarted named nothing of it: its page now says "Resumed as execution M".
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { restartedByAutoResume } from '../../helpers/restarted-by-auto-resume.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';

let processes: ServerProcesses;
let browser: Browser;
beforeAll(async () => {
  ensureGuiBuilt();
  processes = await ServerProcesses.open({
    SVC_COMMAND_REAPER_ENABLED: 'false',
    SVC_AUTO_RESUME_MIN_STALE_SECONDS: '1',
    SVC_AUTO_RESUME_MODE: 'restart',
    SVC_LOG_LEVEL: 'info',
  });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await processes?.close();
});

it("links auto-resume's successor to the execution it restarted, where its replayed step ran", async () => {
  const { base, id, successor } = await restartedByAutoResume(processes, 'gui/audit/resumed_from');
  expect((await http(base, 'GET', `/api/executions/${successor}`)).body).toMatchObject({ retry_of: null, resumed_from: id });

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/ui/#/executions/${successor}`);
  const link = page.locator('dl.facts dt:text-is("Resumed from") + dd a');
  await expect.poll(() => link.textContent(), { timeout: 15_000 }).toBe(`execution ${id}`);
  expect(await link.getAttribute('href')).toBe(`#/executions/${id}`);
  const replayed = page.locator('svg.graph [data-step="first"]');
  await expect.poll(() => replayed.getAttribute('data-replayed'), { timeout: 15_000 }).toBe('true');
  expect(await replayed.getAttribute('aria-label')).toBe(`step first, completed, replayed from execution ${id}, which auto-resume restarted`);
  expect(await replayed.locator('title').textContent()).toBe(`first (replayed from execution ${id}, which auto-resume restarted)`);
  expect(await page.locator('main').textContent()).not.toContain('the execution retried');
  // And the execution restarted links forward to it (GET /api/executions/{id}'s resumed_as).
  await page.goto(`${base}/ui/#/executions/${id}`);
  const forward = page.locator('dl.facts dt:text-is("Resumed as") + dd a');
  await expect.poll(() => forward.textContent(), { timeout: 15_000 }).toBe(`execution ${successor}`);
  expect(await forward.getAttribute('href')).toBe(`#/executions/${successor}`);
  await page.close();
}, 180_000);
