// "New credential" → Create with the name of a credential that exists: POST /api/credentials
// creates or updates by name, and the console sent it as it was, so the existing credential's
// data (a token playbooks use) was replaced without a word. The console now asks first; declined,
// nothing is sent, and the stored credential is as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { openConsolePage, type ConsolePage } from '../../helpers/console-page.ts';

describe('Create on a name that exists', () => {
  let ui: ConsolePage;
  beforeAll(async () => {
    ui = await openConsolePage({ workers: 0 });
    const made = await http(ui.stack.url, 'POST', '/api/credentials', { name: 'prod_token', type: 'bearer', data: { token: 'the-real-one' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  }, 300_000);
  afterAll(async () => ui?.close());

  it('asks before replacing it, and sends nothing when declined', async () => {
    const { page, stack } = ui;
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const before = (await http(stack.url, 'GET', '/api/credentials/prod_token')).body;
    await page.goto(`${stack.url}/ui/#/operations`);
    await page.getByRole('cell', { name: 'prod_token', exact: true }).waitFor();
    const form = page.getByRole('form', { name: 'New credential' });
    await form.getByLabel('Name').fill('prod_token');
    await form.getByRole('combobox').selectOption('bearer');
    await form.getByLabel('token', { exact: true }).fill('a-typo');
    await form.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => dialogs).toEqual(['A credential named prod_token (bearer) exists: replace its data with this bearer one?']);
    await page.waitForLoadState('networkidle');
    expect((await http(stack.url, 'GET', '/api/credentials/prod_token')).body.updated_at).toBe(before.updated_at);
    // A new name is created at once, as before.
    await form.getByLabel('Name').fill('other_token');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('cell', { name: 'other_token', exact: true }).waitFor();
    expect(dialogs).toHaveLength(1);
  }, 60_000);
});
