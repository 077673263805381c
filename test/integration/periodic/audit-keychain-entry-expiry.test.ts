// The spec's scopes table: a global entry lives "until expiry" and is cleaned up at "TTL expiry".
// Nothing removed one: an entry without auto_renew, once expired, answered every read `expired`
// for good, so every later run of its playbook failed (template_error) until an admin deleted the
// entry by hand. The housekeeping job keychain_entry_expiry now deletes entries without auto_renew
// expired over a grace; the next use then makes the entry again from its definition. Auto-renewing
// entries stay (their renew_config is how they are renewed), as do live ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireKeychainEntries } from '../../../src/periodic/keychain-entry-expiry.ts';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;

beforeAll(async () => {
  target = await startHttpTarget();
  s = await startTestStack({ workers: 1, concurrency: 2 });
  const cred = await http(s.url, 'POST', '/api/credentials', {
    name: 'api_client_auth',
    type: 'oauth2',
    data: { client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, token_url: `${target.url}/token` },
  });
  expect(cred.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const PLAYBOOK = () => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: no_renew, path: kce/no-renew }
keychain:
  - { name: api, kind: oauth2, scope: global, auth: api_client_auth, endpoint: "${target.url}/token?expires_in=1" }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "${target.url}/protected", headers: { Authorization: "Bearer {{ keychain.api.access_token }}" } }
`;
const tokenRequests = () => target.requests.filter((r) => r.path === '/token').length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('keychain entries past their expiry', () => {
  it('an expired entry without auto_renew is deleted by the housekeeping job, and the next run makes it again', async () => {
    const { catalog_id: catalogId } = await s.register(PLAYBOOK());
    expect((await s.wait(await s.run('kce/no-renew'))).status).toBe('completed');
    expect(tokenRequests()).toBe(1);
    await sleep(1_300); // expires_in was 1 s
    // The spec's expired read: the worker fails the step (no auto_renew), nothing is requested.
    expect((await s.wait(await s.run('kce/no-renew'))).status).toBe('failed');
    expect(tokenRequests()).toBe(1);

    // Beside it: an expired auto-renewing entry and a live one, stored through the API.
    const renewConfig = { endpoint: `${target.url}/token` };
    expect((await http(s.url, 'POST', `/api/keychain/${catalogId}/renews`, { token_data: { access_token: 'a' }, credential_type: 'oauth2', expires_at: '2020-01-01T00:00:00Z', auto_renew: true, renew_config: renewConfig })).status).toBe(201);
    expect((await http(s.url, 'POST', `/api/keychain/${catalogId}/live`, { token_data: { access_token: 'b' }, credential_type: 'bearer', ttl_seconds: 3600 })).status).toBe(201);

    expect(await expireKeychainEntries(s.deps, 0)).toBe(1);
    const listed = await http(s.url, 'GET', `/api/keychain/catalog/${catalogId}`);
    expect(listed.body.entries.map((e: { keychain_name: string }) => e.keychain_name)).toEqual(['live', 'renews']);
    expect(s.logs.some((l) => l.includes('expired keychain entries deleted') && l.includes('"entries":1'))).toBe(true);

    // Gone, so the next run makes it again from its definition.
    expect((await s.wait(await s.run('kce/no-renew'))).status).toBe('completed');
    expect(tokenRequests()).toBe(2);
    expect(await expireKeychainEntries(s.deps, 0)).toBe(0);
  });

  it('keeps an entry expired within the grace: a read then still answers expired, as the spec says', async () => {
    const { catalog_id: catalogId } = await s.register(PLAYBOOK().replace('kce/no-renew', 'kce/grace').replace('no_renew', 'grace'));
    expect((await http(s.url, 'POST', `/api/keychain/${catalogId}/recent`, { token_data: { access_token: 'c' }, credential_type: 'bearer', expires_at: new Date(Date.now() - 1_000).toISOString() })).status).toBe(201);
    expect(await expireKeychainEntries(s.deps)).toBe(0);
    expect((await http(s.url, 'GET', `/api/keychain/${catalogId}/recent`)).body.status).toBe('expired');
  });
});
