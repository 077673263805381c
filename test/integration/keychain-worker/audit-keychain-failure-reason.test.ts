// A keychain entry the worker could not make, renew or use resolves to an empty object (the spec),
// so the template reading it fails the step; the step's error said only "keychain entry 'api' has
// no field 'access_token'", as if the token answer lacked the field, whatever happened: a token
// endpoint answering 500, a credential deleted while its playbook ran, an entry expired. The
// reason was in the worker's log alone. The error now says why, and still holds no secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const CLIENT_SECRET = 'kc-reason-client-secret-7Qx9';
let s: TestStack;
let target: HttpTarget;

beforeAll(async () => {
  target = await startHttpTarget(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://target');
    // Echoes what it was sent, the client secret among it, as some token endpoints do in their errors.
    if (url.pathname === '/token-down') res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'down', sent: req.headers.authorization ?? null }));
  });
  s = await startTestStack({ workers: 1, concurrency: 2 });
  for (const name of ['reason_client_auth', 'doomed_client_auth']) {
    const cred = await http(s.url, 'POST', '/api/credentials', { name, type: 'oauth2', data: { client_id: 'c', client_secret: CLIENT_SECRET, token_url: `${target.url}/token` } });
    expect(cred.status).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

function playbook(path: string, keychain: string): string {
  return `
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { base: "${target.url}" }
${keychain}
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "{{ workload.base }}/echo", headers: { Authorization: "Bearer {{ keychain.api.access_token }}" } }
`;
}

async function failure(path: string): Promise<{ code: string; message: string; events: string }> {
  const id = await s.run(path);
  const final = await s.wait(id);
  expect(final.status).toBe('failed');
  return { ...final.error, events: JSON.stringify(await s.events(id)) };
}

describe('a keychain entry that could not be resolved: the step says why', () => {
  it('a token endpoint answering 500: the entry could not be made, and the answer is not quoted', async () => {
    await s.register(playbook('kcr/down', `keychain:\n  - { name: api, kind: oauth2, scope: local, auth: reason_client_auth, endpoint: "{{ workload.base }}/token-down" }`));
    const error = await failure('kcr/down');
    expect(error.code).toBe('template_error');
    // Before: "... keychain entry 'api' has no field 'access_token'" and nothing more.
    expect(error.message).toContain("keychain entry 'api' has no field 'access_token' (it could not be made: token endpoint answered HTTP 500 Internal Server Error, expected 200)");
    expect(error.events).toContain('(it could not be made: ');
    expect(error.events).not.toContain(CLIENT_SECRET);
  });

  it('its auth credential deleted while the playbook was in use: the entry could not be made, naming the credential', async () => {
    await s.register(playbook('kcr/deleted', `keychain:\n  - { name: api, kind: oauth2, scope: local, auth: doomed_client_auth }`));
    expect((await http(s.url, 'DELETE', '/api/credentials/doomed_client_auth')).status).toBe(200);
    const error = await failure('kcr/deleted');
    expect(error.message).toContain("keychain entry 'api' has no field 'access_token' (it could not be made: credential 'doomed_client_auth' not found)");
  });

  it('an entry stored without auto_renew that expired: it says so', async () => {
    const reg = await s.register(playbook('kcr/expired', ''));
    const stored = await http(s.url, 'POST', `/api/keychain/${reg.catalog_id}/api`, {
      token_data: { access_token: 'old-token' },
      credential_type: 'bearer',
      cache_type: 'token',
      scope_type: 'global',
      expires_at: new Date(Date.now() - 1_000).toISOString(),
      auto_renew: false,
    });
    expect(stored.status).toBeLessThan(300);
    const error = await failure('kcr/expired');
    expect(error.message).toContain("keychain entry 'api' has no field 'access_token' (it expired, and it does not auto-renew)");
  });

  it('an auto-renewing entry whose renewal is refused: it says the renewal failed and why', async () => {
    const reg = await s.register(playbook('kcr/renewal', ''));
    const stored = await http(s.url, 'POST', `/api/keychain/${reg.catalog_id}/api`, {
      token_data: { access_token: 'old-token' },
      credential_type: 'oauth2',
      cache_type: 'token',
      scope_type: 'global',
      expires_at: new Date(Date.now() - 1_000).toISOString(),
      auto_renew: true,
      renew_config: { endpoint: `${target.url}/token-down`, data: { client_secret: CLIENT_SECRET } },
    });
    expect(stored.status).toBeLessThan(300);
    const error = await failure('kcr/renewal');
    expect(error.message).toContain("keychain entry 'api' has no field 'access_token' (it expired and could not be renewed: token endpoint answered HTTP 500, expected 200)");
    expect(error.message).not.toContain(CLIENT_SECRET);
  });
});
