// `svc simulate` of docs/playbook-dsl.md's first example (a loop over the users an http task
// fetched) said `status: depends_on_data (the items of store depends on data: …)`: a plural
// subject with a singular verb, in the sentence the console shows too. It now reads
// `what store loops over depends on data`.
import { expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { undecidedText } from '../../../machines/simulation-data.ts';

const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: users, path: sim/users }
workflow:
  - step: start
    tool: { name: users, kind: http, url: "http://127.0.0.1:9/users" }
    next: store
  - step: store
    loop: { in: "{{ steps.start.result.body }}", iterator: user }
    tool: { name: n, kind: noop }
`;

it("names a loop's undecided items as what the step loops over", () => {
  const r = simulatePlaybook(yaml);
  expect(r.status).toBe('depends_on_data');
  if (!r.undecided) throw new Error('no undecided decision');
  expect(undecidedText(r.undecided)).toBe('what store loops over depends on data: no example result of start');
});
