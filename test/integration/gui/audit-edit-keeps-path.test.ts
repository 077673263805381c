// Edit on a catalog entry registers a new version of that entry's path. A playbook registered at a
// path of the request's own (`POST /api/catalog/playbook {content, path}`, docs/playbook-dsl.md)
// need not say it in metadata.path; the editor sent the text alone, so Register went to the
// document's metadata.path (another entry) or, with none, was refused ('metadata.path: is required').
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const NO_PATH = `apiVersion: svc/v1
kind: Playbook
metadata: { name: unnamed }
workflow:
  - step: only
    tool: { name: o, kind: noop }
`;
const OTHER_PATH = `apiVersion: svc/v1
kind: Playbook
metadata: { name: moved, path: gui/audit/written-here }
workflow:
  - step: only
    tool: { name: o, kind: noop }
`;

describe('Edit on an entry registered at a path of its request', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
  }, 300_000);
  afterAll(async () => ui?.close());

  const registerAt = async (path: string, content: string) => {
    const r = await fetch(`${stack.url}/api/catalog/playbook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path, content }) });
    expect(r.status).toBe(201);
  };
  const versionOf = async (path: string) => {
    const r = await fetch(`${stack.url}/api/catalog/playbook/${path}`);
    return r.status === 200 ? ((await r.json()) as { version: number }).version : r.status;
  };
  const editAndRegister = async (path: string) => {
    await page.goto(`${stack.url}/ui/#/catalog/edit/${encodeURIComponent(path)}`);
    const editor = page.getByLabel('Playbook YAML');
    await expect.poll(() => editor.inputValue(), { timeout: 10_000 }).toContain('step: only');
    await editor.fill(`${await editor.inputValue()}    next: done\n  - step: done\n`);
    await page.getByRole('button', { name: 'Register' }).click();
  };

  it('registers version 2 of that path when the document has no metadata.path', async () => {
    await registerAt('gui/audit/given-path', NO_PATH);
    await editAndRegister('gui/audit/given-path');
    await page.waitForURL(/#\/catalog\/entry\/gui%2Faudit%2Fgiven-path\?version=2$/, { timeout: 10_000 });
    expect(await versionOf('gui/audit/given-path')).toBe(2);
  }, 60_000);

  it('registers version 2 of that path, not of the path metadata.path names', async () => {
    await registerAt('gui/audit/stored-here', OTHER_PATH);
    await editAndRegister('gui/audit/stored-here');
    await page.waitForURL(/#\/catalog\/entry\/gui%2Faudit%2Fstored-here\?version=2$/, { timeout: 10_000 });
    expect(await versionOf('gui/audit/stored-here')).toBe(2);
    expect(await versionOf('gui/audit/written-here')).toBe(404);
  }, 60_000);
});
