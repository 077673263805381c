// The spec (Resources, Playbook document): "The auth attribute is a reference NAME to a stored
// credential, never the credential itself." A literal `auth` that no credential can be named
// (a pasted token, a connection URL: credential names are letters, digits, _ . -, at most 200
// characters) registered, and every run then failed with credential_not_found, the text written
// into five error events. It is now a problem at registration, at its line and column; names,
// ids and templates register as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const TOKEN = 'Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0';
const URL_WITH_PASSWORD = 'postgres://app:hunter2@db.internal/app';

const taskAuth = (auth: string) =>
  `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: a, path: authref/task }\nworkflow:\n  - step: start\n    tool:\n      - name: t\n        kind: http\n        url: "http://127.0.0.1:9/"\n        auth: "${auth}"\n`;
const keychainAuth = (auth: string) =>
  `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: k, path: authref/keychain }\nkeychain:\n  - name: api\n    kind: oauth2\n    endpoint: "http://127.0.0.1:9/token"\n    auth: "${auth}"\nworkflow:\n  - step: start\n    tool: { name: t, kind: noop }\n`;
const mcpAuth = (auth: string) => `apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: tools }\nendpoint: http://127.0.0.1:9/mcp\nauth: "${auth}"\n`;
const register = (content: string) => http(t.url, 'POST', '/api/catalog/playbook', { content });
const registerMcp = (content: string) => http(t.url, 'POST', '/api/catalog/register', { content, resource_type: 'mcp' });

describe('auth names a credential, never holds one', () => {
  it("a task's literal auth that is no credential name is a problem at its line and column", async () => {
    for (const auth of [TOKEN, URL_WITH_PASSWORD, 'x'.repeat(201)]) {
      const r = await register(taskAuth(auth));
      expect(r.status, auth).toBe(400);
      expect(r.body.detail.problems, auth).toEqual([
        { path: 'workflow[0].tool[0].auth', message: expect.stringMatching(/^must name a stored credential/), line: 10, column: 9 },
      ]);
    }
  });

  it("a keychain entry's literal auth likewise", async () => {
    const r = await register(keychainAuth(TOKEN));
    expect(r.status).toBe(400);
    expect(r.body.detail.problems).toEqual([{ path: 'keychain[0].auth', message: expect.stringMatching(/^must name a stored credential/), line: 8, column: 5 }]);
  });

  it("an MCP server's auth (never rendered) likewise; a name registers", async () => {
    const r = await registerMcp(mcpAuth(URL_WITH_PASSWORD));
    expect(r.status).toBe(400);
    expect(r.body.detail.problems).toEqual([{ path: 'auth', message: expect.stringMatching(/^must name a stored credential/), line: 5, column: 1 }]);
    expect((await registerMcp(mcpAuth('tools_auth'))).status).toBe(201);
  });

  it('names (letters, digits, _ . -), ids and templates register as before', async () => {
    for (const auth of ['api_auth', 'team.api-auth_2', '42', '{{ workload.cred }}', 'x'.repeat(200)]) {
      expect((await register(taskAuth(auth))).status, auth).toBe(201);
      expect((await register(keychainAuth(auth))).status, auth).toBe(201);
    }
  });
});
