// The spec's Limits: "renewal TTL fallback | 3600 s | when the token response lacks expires_in".
// A global entry the worker renewed from a token answer without expires_in (and no ttl_seconds in
// its definition) was stored for the global default, 86400 s: a day of a token whose endpoint said
// nothing of its life, 24 times the spec's fallback. A renewed entry now lives 3600 s then.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startOAuthStack } from '../../helpers/oauth-stack.ts';
import type { TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;

beforeAll(async () => {
  ({ s, target } = await startOAuthStack('renew_client_auth'));
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const playbook = (path: string, keychain: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { base: "${target.url}" }
${keychain}
workflow:
  - step: start
    tool:
      - { name: call, kind: http, url: "{{ workload.base }}/protected", headers: { Authorization: "Bearer {{ keychain.api.access_token }}" } }
`;

describe('a keychain entry renewed from a token answer without expires_in', () => {
  it.each([
    ['with a definition', 'kc/renew-ttl-defined', `keychain:\n  - { name: api, kind: oauth2, scope: global, auth: renew_client_auth, auto_renew: true, endpoint: "{{ workload.base }}/token?expires_in=none" }`],
    ['stored through the API, without a definition', 'kc/renew-ttl-stored', ''],
  ])('lives the renewal fallback, 3600 s, not the global default (%s)', async (_how, path, keychain) => {
    const reg = await s.register(playbook(path, keychain));
    // Expired already: the first command renews it.
    const put = await http(s.url, 'POST', `/api/keychain/${reg.catalog_id}/api`, {
      token_data: { access_token: 'expired-token' },
      credential_type: 'oauth2',
      expires_at: '2000-01-01T00:00:00Z',
      auto_renew: true,
      renew_config: { endpoint: `${target.url}/token?expires_in=none`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, data: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET } },
    });
    expect(put.status).toBe(201);
    const before = target.issuedTokens.length;
    const id = await s.run(path);
    expect((await s.wait(id)).status).toBe('completed');
    expect(target.issuedTokens.length - before).toBe(1);
    const read = await http(s.url, 'GET', `/api/keychain/${reg.catalog_id}/api`);
    expect(read.body.status).toBe('success');
    expect(read.body.ttl_seconds).toBeGreaterThan(3500);
    expect(read.body.ttl_seconds).toBeLessThanOrEqual(3600);
  });
});
