// A keychain entry's definition is rendered by the worker over the context of the command that
// uses it, and a command carries only the roots its templates read: an entry whose endpoint came
// from `{{ workload.base }}` failed to render ('workload' is undefined) whenever no task of the
// command read workload itself, and the step failed. The command now carries what the
// definitions of the entries its tasks use read too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpTarget } from '../../helpers/http-target.ts';
import { startOAuthStack } from '../../helpers/oauth-stack.ts';
import type { TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;

beforeAll(async () => {
  ({ s, target } = await startOAuthStack('ctx_client_auth'));
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

describe('a keychain entry whose definition reads workload', () => {
  it('is made for a task that reads only the entry', async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: kc_ctx, path: kc/definition-context }
workload: { token_endpoint: "${target.url}/token" }
keychain:
  - { name: api, kind: oauth2, scope: local, auth: ctx_client_auth, endpoint: "{{ workload.token_endpoint }}" }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, url: "${target.url}/protected", headers: { Authorization: "Bearer {{ keychain.api.access_token }}" } }
`);
    const id = await s.run('kc/definition-context');
    const final = await s.wait(id);
    expect(final.status, JSON.stringify(final.error)).toBe('completed');
    expect(s.logs.join('')).not.toContain("keychain definition 'api' could not be rendered");
  });
});
