// Multi-line secrets in the console's credential form, in a real browser against a real server and
// PostgreSQL: a PEM private key (service_account, snowflake) or a NATS .creds file pasted into its
// field is stored with its line breaks (a one-line password input dropped them, which breaks a PEM
// key). Such a field is a textarea, masked until shown, labelled and reachable from the keyboard;
// nothing of the secret is in the page once saved, and the edit form shows the field empty (left
// blank it keeps the stored value). The free-form JSON boxes of secrets (a custom credential's data,
// headers and query; an open type's other fields) are masked with the same toggle. The secrets are
// fake and are compared, never printed.
import { nkeys } from '@nats-io/transport-node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt } from '../../helpers/gui-build.ts';
import { http } from '../../helpers/http.ts';
import { credsFile, natsJwt, natsUser } from '../../helpers/nats-operator.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

// A PEM-like key (not a real one); a line of base64 each, as a PEM file has them.
const PEM = ['-----BEGIN PRIVATE KEY-----', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7gui7test', 'aW5nIG11bHRpLWxpbmUgc2VjcmV0cyBpbiB0aGUgY29uc29sZSBmb3JtIDEy', 'MzQ=', '-----END PRIVATE KEY-----', ''].join('\n');
// A .creds file as nsc writes it, of a user signed by an account key made here.
const user = natsUser();
const CREDS = credsFile(natsJwt(nkeys.createAccount(), { sub: user.pub, name: 'console', nats: { type: 'user', version: 2 } }), user.seed);

/** What the server stored in field `field` of credential `name` (read as an admin; never printed). */
async function storedField(stack: TestStack, name: string, field: string): Promise<unknown> {
  const res = await http(stack.url, 'GET', `/api/credentials/${name}?include_data=true`);
  expect(res.status).toBe(200);
  return res.body.data[field];
}

/** The form's type choice (its label's text also holds the options). */
const typeOf = (form: ReturnType<Page['getByRole']>) => form.getByRole('combobox').first();

/** How a stored value compares with the one typed in, without showing either. */
const sameAs = (stored: unknown, typed: string) => ({
  equal: stored === typed,
  lines: typeof stored === 'string' ? stored.split('\n').length : null,
  expectedLines: typed.split('\n').length,
});

describe('multi-line secrets in the credential form', () => {
  let stack: TestStack;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureGuiBuilt();
    stack = await startTestStack({ workers: 0 });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of (400|404)/.test(m.text())) consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
    page.on('dialog', (d) => void d.accept());
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('the types say which secret fields are multi-line; others do not carry the flag', async () => {
    const res = await http(stack.url, 'GET', '/api/credential-types');
    const field = (type: string, name: string) => res.body.types.find((t: { type: string }) => t.type === type).fields.find((f: { name: string }) => f.name === name);
    expect(field('service_account', 'private_key')).toMatchObject({ secret: true, multiline: true });
    expect(field('snowflake', 'private_key')).toMatchObject({ secret: true, multiline: true });
    expect(field('nats', 'creds')).toMatchObject({ secret: true, multiline: true });
    expect(field('postgres', 'password').multiline).toBeUndefined();
    expect(field('nats', 'nkey').multiline).toBeUndefined();
  });

  it('stores a pasted PEM key with its line breaks, masked, and never shows it again', async () => {
    await page.goto(`${stack.url}/ui/#/operations`);
    const form = page.getByRole('form', { name: 'New credential' });
    await form.getByLabel('Name').fill('sa_key');
    await typeOf(form).selectOption('service_account');
    await form.getByLabel('client_email', { exact: true }).fill('svc@p.iam.gserviceaccount.com');
    const key = form.getByLabel('private_key', { exact: true });
    // CRLF as a file from Windows has it: stored as LF.
    await key.fill(PEM.replaceAll('\n', '\r\n'));
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('region', { name: 'Credentials' }).getByRole('cell', { name: 'sa_key' }).waitFor();
    expect(sameAs(await storedField(stack, 'sa_key', 'private_key'), PEM)).toEqual({ equal: true, lines: 6, expectedLines: 6 });
    const line = PEM.split('\n')[1];
    expect((await page.content()).includes(line!)).toBe(false);
    expect(stack.logs.join('').includes(line!)).toBe(false);

    // A textarea (the form is empty again after the save), masked while not shown.
    expect(await key.evaluate((el) => el.tagName)).toBe('TEXTAREA');
    // The toggle (a button, so Tab and Enter reach it) shows it and masks it again.
    const masking = () => key.evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).getPropertyValue('-webkit-text-security'));
    expect(await masking()).toBe('disc');
    const toggle = form.getByRole('button', { name: 'Show private_key' });
    await toggle.focus();
    await page.keyboard.press('Enter');
    expect(await masking()).toBe('none');
    expect(await form.getByRole('button', { name: 'Show private_key' }).getAttribute('aria-pressed')).toBe('true');
    await page.keyboard.press('Enter');
    expect(await masking()).toBe('disc');
    await page.keyboard.press('Enter');
    expect(await masking()).toBe('none');
    // The password inputs beside it are unchanged.
    expect(await form.getByLabel('private_key_id', { exact: true }).getAttribute('type')).toBe('password');


    // Edit: the key's field is empty; a save that leaves it blank keeps the stored key.
    await page.getByRole('region', { name: 'Credentials' }).getByRole('row', { name: /sa_key/ }).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit credential' });
    expect(await edit.getByLabel('private_key', { exact: true }).inputValue()).toBe('');
    // Shown before, masked again in the form opened since.
    expect(await edit.getByLabel('private_key', { exact: true }).evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).getPropertyValue('-webkit-text-security'))).toBe('disc');
    await edit.getByLabel('project_id', { exact: true }).fill('p2');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('form', { name: 'New credential' }).waitFor();
    await expect.poll(() => storedField(stack, 'sa_key', 'project_id')).toBe('p2');
    expect(sameAs(await storedField(stack, 'sa_key', 'private_key'), PEM).equal).toBe(true);
  });

  it('keeps the line breaks of a snowflake key and a NATS .creds file', async () => {
    await page.goto(`${stack.url}/ui/#/operations`);
    const form = page.getByRole('form', { name: 'New credential' });
    await form.getByLabel('Name').fill('wh_key');
    await typeOf(form).selectOption('snowflake');
    await form.getByLabel('account', { exact: true }).fill('org-acct');
    await form.getByLabel('user', { exact: true }).fill('app');
    await form.getByLabel('private_key', { exact: true }).fill(PEM);
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('region', { name: 'Credentials' }).getByRole('cell', { name: 'wh_key' }).waitFor();
    expect(sameAs(await storedField(stack, 'wh_key', 'private_key'), PEM).equal).toBe(true);

    await form.getByLabel('Name').fill('bus_login');
    await typeOf(form).selectOption('nats');
    await form.getByLabel('url', { exact: true }).fill('nats://127.0.0.1:4222');
    await form.getByLabel('creds', { exact: true }).fill(CREDS);
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('region', { name: 'Credentials' }).getByRole('cell', { name: 'bus_login' }).waitFor();
    expect(sameAs(await storedField(stack, 'bus_login', 'creds'), CREDS)).toEqual({ equal: true, lines: CREDS.split('\n').length, expectedLines: CREDS.split('\n').length });
    expect((await page.content()).includes(user.seed)).toBe(false);
  });

  it("masks the free-form JSON boxes of secrets (custom data, headers, other fields) until shown", async () => {
    // Fake secrets, compared and never printed.
    const signature = 'hook-signature-7f3a9c1e5b2d';
    const extraToken = 'extra-token-4e8b2a6c0d1f';
    const masking = (box: ReturnType<Page['getByLabel']>) => box.evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).getPropertyValue('-webkit-text-security'));
    await page.goto(`${stack.url}/ui/#/operations`);
    const form = page.getByRole('form', { name: 'New credential' });
    await form.getByLabel('Name').fill('hook_secret');
    await typeOf(form).selectOption('custom');
    const data = form.getByLabel('Data (JSON; sealed by the server, never shown again)');
    const headers = form.getByLabel('headers', { exact: true });
    expect(await masking(data)).toBe('disc');
    expect(await masking(headers)).toBe('disc');
    expect(await masking(form.getByLabel('query', { exact: true }))).toBe('disc');
    // The same toggle as a multi-line secret's: a button naming its box, pressed or not.
    const showData = form.getByRole('button', { name: 'Show data' });
    expect(await showData.getAttribute('aria-pressed')).toBe('false');
    expect(await showData.getAttribute('aria-controls')).toBe(await data.getAttribute('id'));
    await showData.click();
    expect(await masking(data)).toBe('none');
    expect(await showData.getAttribute('aria-pressed')).toBe('true');
    // Each box has its own toggle: headers stays masked.
    expect(await masking(headers)).toBe('disc');
    await showData.click();
    expect(await masking(data)).toBe('disc');
    expect(await showData.getAttribute('aria-pressed')).toBe('false');
    await showData.click();

    const typedData = `{"secret": "${signature}"}`;
    const typedHeaders = `{"X-Signature": "${signature}"}`;
    await data.fill(typedData);
    await headers.fill(typedHeaders);
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('region', { name: 'Credentials' }).getByRole('cell', { name: 'hook_secret' }).waitFor();
    const stored = await http(stack.url, 'GET', '/api/credentials/hook_secret?include_data=true');
    expect(stored.status).toBe(200);
    expect(stored.body.data.secret === signature && stored.body.data.headers['X-Signature'] === signature).toBe(true);
    expect((await page.content()).includes(signature)).toBe(false);
    // Shown before the save, masked again in the form made anew.
    expect(await masking(data)).toBe('disc');
    expect(await form.getByRole('button', { name: 'Show data' }).getAttribute('aria-pressed')).toBe('false');
    // And in the form opened for another credential.
    await form.getByRole('button', { name: 'Show data' }).click();
    await page.getByRole('region', { name: 'Credentials' }).getByRole('row', { name: /hook_secret/ }).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit credential' });
    expect(await masking(edit.getByLabel('Data (JSON; sealed by the server, never shown again)'))).toBe('disc');
    await edit.getByRole('button', { name: 'Cancel' }).click();

    // The extras of another open type may carry a secret added by hand: masked the same way.
    await form.getByLabel('Name').fill('sa_extra');
    await typeOf(form).selectOption('service_account');
    await form.getByLabel('client_email', { exact: true }).fill('svc@p.iam.gserviceaccount.com');
    await form.getByLabel('private_key', { exact: true }).fill(PEM);
    const extra = form.getByLabel('Other fields (JSON)');
    expect(await masking(extra)).toBe('disc');
    const showExtra = form.getByRole('button', { name: 'Show other fields' });
    await showExtra.click();
    expect(await showExtra.getAttribute('aria-pressed')).toBe('true');
    expect(await masking(extra)).toBe('none');
    await extra.fill(`{"extra_token": "${extraToken}"}`);
    await form.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('region', { name: 'Credentials' }).getByRole('cell', { name: 'sa_extra' }).waitFor();
    expect((await storedField(stack, 'sa_extra', 'extra_token')) === extraToken).toBe(true);
    expect(await masking(extra)).toBe('disc');
    expect((await page.content()).includes(extraToken)).toBe(false);
  });

  it('wrote nothing to the browser console', () => {
    expect(consoleErrors).toEqual([]);
  });
});
