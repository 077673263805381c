// An entry's lifetime past what the keychain API stores (ttl_seconds at most 2^31-1 s, about 68
// years) was not cached at all: a token answer with `expires_in: 99999999999`, or a definition's
// `ttl_seconds: 99999999999` (the playbook schema takes it), made the worker's store answer 422,
// logged `KEYCHAIN: Failed to store 'api'`, and every command asked the token endpoint again. The
// worker now stores such an entry with the longest TTL the API takes; it is reused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startOAuthStack } from '../../helpers/oauth-stack.ts';
import type { TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;
const MAX_TTL_SECONDS = 2_147_483_647;

beforeAll(async () => {
  ({ s, target } = await startOAuthStack('long_client_auth'));
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const playbook = (path: string, entry: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { base: "${target.url}" }
keychain:
  - ${entry}
workflow:
  - step: start
    tool:
      - { name: call, kind: http, url: "{{ workload.base }}/protected", headers: { Authorization: "Bearer {{ keychain.api.access_token }}" } }
`;

describe('a keychain entry whose lifetime is longer than the API stores', () => {
  it.each([
    ['the token answer says so', 'kc/long-answer', `{ name: api, kind: oauth2, scope: global, auth: long_client_auth, endpoint: "${'{{ workload.base }}'}/token?expires_in=99999999999" }`],
    ['the definition says so', 'kc/long-defined', `{ name: api, kind: oauth2, scope: global, auth: long_client_auth, ttl_seconds: 99999999999, endpoint: "${'{{ workload.base }}'}/token?expires_in=none" }`],
  ])('is stored with the longest TTL the API takes, and reused (%s)', async (_why, path, entry) => {
    const reg = await s.register(playbook(path, entry));
    const before = target.issuedTokens.length;
    for (let i = 0; i < 2; i++) {
      const id = await s.run(path);
      expect((await s.wait(id)).status).toBe('completed');
    }
    expect(target.issuedTokens.length - before).toBe(1);
    expect(s.logs.join('')).not.toContain("KEYCHAIN: Failed to store 'api'");
    const read = await http(s.url, 'GET', `/api/keychain/${reg.catalog_id}/api`);
    expect(read.body.status).toBe('success');
    expect(read.body.ttl_seconds).toBeGreaterThan(MAX_TTL_SECONDS - 120);
  });
});
