// A playbook's keychain definition took any text as `method` ('../', 'GET POST', 'CONNECT'): the
// playbook registered, and at every run the worker's fetch refused the request, so the entry
// resolved to {} and each task using it failed on a missing field, far from the typo. The
// method is now one of the http task's (any case), refused at registration naming the field; a
// template is checked once rendered, where the worker's own parse refuses it before any request.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (method: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: kc, path: audit/keychain-method }
workload: { verb: POST }
keychain:
  - { name: k, kind: http, endpoint: "https://token.example/token", method: "${method}" }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "http://127.0.0.1:9/x", headers: { Authorization: "Bearer {{ keychain.k.token }}" } }
`;

describe("a keychain definition's method", () => {
  it.each(['../', 'GET POST', 'CONNECT', 'TRACE'])('%j is refused at registration, naming the field and its line', (method) => {
    expect(parsePlaybook(playbook(method))).toMatchObject({ ok: false, problems: [{ path: 'keychain[0].method', message: expect.stringContaining('GET, POST'), line: 6 }] });
  });

  it('passes as a method in any case, or as a template', () => {
    for (const method of ['POST', 'get', 'Put', '{{ workload.verb }}']) expect(parsePlaybook(playbook(method)).ok, method).toBe(true);
  });
});
