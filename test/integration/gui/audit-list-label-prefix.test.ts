// The executions list filters by label and by path prefix, as GET /api/executions does (`label`
// repeated, key:value, all of them; `path_prefix`) and `svc list --label`/`--path-prefix` do: the
// console had neither, only the exact path. The filters stay in the page's URL under the API's names.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';
import type { TestStack } from '../../helpers/stack.ts';

const playbook = (path: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.split('/').pop()}, path: ${path} }
workflow:
  - step: only
    tool: { name: o, kind: noop }
`;

describe('the executions list, by label and path prefix', () => {
  let ui: ConsolePage;
  let stack: TestStack;
  let page: Page;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    ({ stack, page } = ui);
    for (const path of ['billing/invoice', 'billing/refund', 'shipping/label']) await stack.register(playbook(path));
    const start = async (path: string, labels: Record<string, string>) => {
      const r = await http(stack.url, 'POST', '/api/run/playbook', { path, labels });
      if (r.status !== 200) throw new Error(`run failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.execution_id as number;
    };
    ids.acmeInvoice = await start('billing/invoice', { tenant: 'acme', tier: 'gold' });
    ids.acmeRefund = await start('billing/refund', { tenant: 'acme' });
    ids.globexShipping = await start('shipping/label', { tenant: 'globex inc', tier: 'gold' });
  }, 300_000);
  afterAll(async () => ui?.close());

  const listed = async () =>
    (await page.locator('table.list tbody tr td:first-child').allTextContents()).map(Number).sort((a, b) => a - b);

  it('filters by path prefix', async () => {
    await page.goto(`${stack.url}/ui/#/executions`);
    await page.locator('table.list tbody tr').nth(2).waitFor({ timeout: 10_000 });
    await page.getByLabel('Path prefix').fill('billing/');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => u.hash.includes('path_prefix=billing%2F'));
    await expect.poll(listed, { timeout: 10_000 }).toEqual([ids.acmeInvoice, ids.acmeRefund]);
  }, 60_000);

  it('filters by labels, every one given (a value with a space included), and keeps them in the URL', async () => {
    await page.getByLabel('Path prefix').fill('');
    await page.getByLabel('Labels').fill('tier:gold');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => u.hash.includes('label=tier%3Agold') && !u.hash.includes('path_prefix'));
    await expect.poll(listed, { timeout: 10_000 }).toEqual([ids.acmeInvoice, ids.globexShipping]);
    await page.getByLabel('Labels').fill('tier:gold, tenant:globex inc');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(listed, { timeout: 10_000 }).toEqual([ids.globexShipping]);
    // The URL holds them as the API names them: a link (or a reload) lists the same.
    const url = page.url();
    expect(new URLSearchParams(url.split('?')[1]).getAll('label')).toEqual(['tier:gold', 'tenant:globex inc']);
    await page.goto(`${stack.url}/ui/#/executions`);
    await page.locator('table.list tbody tr').nth(2).waitFor({ timeout: 10_000 });
    await page.goto(url);
    await expect.poll(listed, { timeout: 10_000 }).toEqual([ids.globexShipping]);
    expect(await page.getByLabel('Labels').inputValue()).toBe('tier:gold, tenant:globex inc');
  }, 60_000);

  it("shows the server's refusal of a label that is not key:value", async () => {
    await page.getByLabel('Labels').fill('tenant');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('alert').filter({ hasText: 'key:value' }).waitFor({ timeout: 10_000 });
  }, 60_000);
});
