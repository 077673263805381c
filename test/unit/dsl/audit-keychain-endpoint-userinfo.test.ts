// A keychain entry's endpoint with a user name or password (https://user:pass@host/token) was
// registered, and at every run fetch refused it quoting the URL, password and all, into the
// reason the worker logs. A literal one is now refused at registration naming the field, and a
// rendered one is refused before any request with a reason that quotes no URL.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { sendOutbound } from '../../../src/worker/keychain-http.ts';

const playbook = (endpoint: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: kc, path: audit/keychain-userinfo }
workload: { token_url: "https://u:pw@token.example/token" }
keychain:
  - { name: k, kind: http, endpoint: "${endpoint}" }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "http://127.0.0.1:9/x", headers: { Authorization: "Bearer {{ keychain.k.token }}" } }
`;

describe("a keychain endpoint's user name or password", () => {
  it('is refused at registration when literal, naming the field and its line', () => {
    const result = parsePlaybook(playbook('https://user:s3cret-pw@token.example/token'));
    expect(result).toMatchObject({ ok: false, problems: [{ path: 'keychain[0].endpoint', message: expect.stringContaining('must not hold a user name or password'), line: 6 }] });
    expect(JSON.stringify(result)).not.toContain('s3cret-pw');
  });

  it('passes as a template (checked once rendered), and a plain URL passes', () => {
    expect(parsePlaybook(playbook('{{ workload.token_url }}')).ok).toBe(true);
    expect(parsePlaybook(playbook('https://token.example/token')).ok).toBe(true);
  });

  it('rendered, is refused before any request, with a reason that quotes no URL', async () => {
    let asked = 0;
    const fetchImpl: typeof fetch = async () => {
      asked++;
      return new Response('{}');
    };
    const answer = await sendOutbound({ url: 'https://user:s3cret-pw@token.example/token', method: 'POST', headers: {} }, fetchImpl);
    expect(answer).toMatchObject({ ok: false, reason: expect.stringContaining('without a user name or password') });
    expect(JSON.stringify(answer)).not.toContain('s3cret-pw');
    expect(asked).toBe(0);
  });
});
