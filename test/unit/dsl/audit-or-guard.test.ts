// `x is undefined or <reads x>` reads x only where it is defined (`or` reads its right side only
// when the left is false), as `x is defined and <reads x>` does. Registration refused the `or` form
// ('vars.seen' is undefined: no arc sets 'seen'), though it renders at every run.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { renderValue } from '../../../src/dsl/render.ts';

const playbook = (when: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: guard, path: audit/or-guard }
workflow:
  - step: start
    next:
      - { step: again, when: "${when}" }
  - step: again
`;

describe("a read guarded by 'is undefined or'", () => {
  it.each([
    '{{ vars.seen is undefined or vars.seen < 3 }}',
    '{{ vars.seen is not defined or vars.seen < 3 }}',
    '{{ not (vars.seen is defined) or vars.seen < 3 }}',
    "{{ steps.again is undefined or steps.again.status == 'ok' }}",
  ])('registers %s, which renders with the name absent', (when) => {
    expect(parsePlaybook(playbook(when))).toMatchObject({ ok: true });
    expect(renderValue(when, { vars: {}, steps: {} }, 'when')).toBe(true);
  });

  it('still refuses the read on the left of or, and one the left side does not guard', () => {
    const left = parsePlaybook(playbook('{{ vars.seen < 3 or vars.seen is undefined }}'));
    expect(left).toMatchObject({ ok: false, problems: [{ path: 'workflow[0].next[0].when', message: expect.stringContaining("'vars.seen' is undefined") }] });
    const other = parsePlaybook(playbook('{{ vars.seen is undefined or vars.other < 3 }}'));
    expect(other).toMatchObject({ ok: false, problems: [{ path: 'workflow[0].next[0].when', message: expect.stringContaining("'vars.other' is undefined") }] });
    // `is defined or` guards nothing: where it holds, the right side is not read; where it does not, the name is absent.
    const wrong = parsePlaybook(playbook('{{ vars.seen is defined or vars.seen < 3 }}'));
    expect(wrong).toMatchObject({ ok: false, problems: [{ path: 'workflow[0].next[0].when', message: expect.stringContaining("'vars.seen' is undefined") }] });
  });
});
