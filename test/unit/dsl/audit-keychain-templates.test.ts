// A keychain entry's templates are rendered by the worker over its command's context (workload,
// args, vars, steps, execution, tasks, a loop's item; never keychain). Registration checked their
// syntax only: `endpoint: "{{ wrkload.url }}"` or a misspelt workload key registered, and at every
// run the entry failed to render (a worker log line), resolved to nothing, and the task failed on
// 'keychain.k.token' is undefined, naming neither the misspelling nor the entry's field.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (endpoint: string, extra = '') => `apiVersion: svc/v1
kind: Playbook
metadata: { name: kc, path: audit/keychain-templates }
workload: { token_url: "http://127.0.0.1:9/token" }
${extra}keychain:
  - { name: k, kind: http, endpoint: "${endpoint}", headers: { X-Run: "{{ execution.id }}" } }
workflow:
  - step: start
    loop: { in: "{{ [1, 2] }}", iterator: region }
    tool: { name: call, kind: http, url: "http://127.0.0.1:9/x", headers: { Authorization: "Bearer {{ keychain.k.token }}" } }
`;

describe("a keychain entry's templates at registration", () => {
  it.each([
    ['{{ wrkload.url }}', "'wrkload' is undefined"],
    ['{{ workload.tokn_url }}', "the workload declares no 'tokn_url' (did you mean 'token_url'?)"],
    ['{{ keychain.other.url }}', "'keychain' is not available here"],
    ['{{ vars.url }}', "no arc sets 'url'"],
    ['{{ steps.nope.result.url }}', "there is no step 'nope'"],
  ])('refuses %s, naming the field and its line', (endpoint, message) => {
    const result = parsePlaybook(playbook(endpoint));
    expect(result).toMatchObject({ ok: false, problems: [{ path: 'keychain[0].endpoint', message: expect.stringContaining(message), line: 6 }] });
  });

  it('takes what the context holds', () => {
    for (const endpoint of ['{{ workload.token_url }}', '{{ workload.region_url | default(workload.token_url) }}', '{{ workload.token_url }}/{{ region }}/{{ loop.index }}', '{{ args.url | default(workload.token_url) }}']) {
      expect(parsePlaybook(playbook(endpoint)), endpoint).toMatchObject({ ok: true });
    }
    expect(parsePlaybook(playbook('{{ workload.url }}', 'inputs: { url: { type: string } }\n'))).toMatchObject({ ok: true });
  });
});
