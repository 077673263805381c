// Registration's check of `steps.<name>` reads (may that step have run before?) walked the arcs
// from every step to every other, each walk rescanning every step's arcs: a chain of 3,000 steps
// took about a minute to parse, the server's only thread held by one registration meanwhile (the
// API answered POST /api/catalog/playbook after 65 s). It now walks from a step only when a
// template reads it, over arcs indexed once.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const STEPS = 3000;

const chain = (last: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: chain, path: audit/many-steps }
workflow:
  - step: s0
    tool: { name: t, kind: shell, command: "echo {{ steps.s${STEPS}.status | default('') }}" }
    next: s1
${Array.from({ length: STEPS - 1 }, (_, i) => `  - step: s${i + 1}\n    next: s${i + 2}\n`).join('')}  - step: s${STEPS}
    tool: { name: t, kind: shell, command: "echo ${last}" }
`;

describe(`a playbook of ${STEPS} steps`, () => {
  it('is checked in well under the time a registration may take', () => {
    const started = performance.now();
    const ok = parsePlaybook(chain('{{ steps.s0.result }} {{ steps.s1500.status }}'));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(ok).toMatchObject({ ok: true });
  }, 120_000);

  it('still refuses a read of a step that cannot have run before', () => {
    const refused = parsePlaybook(chain('{{ steps.s0.result }}').replace("{{ steps.s3000.status | default('') }}", '{{ steps.s3000.status }}'));
    expect(refused).toMatchObject({ ok: false, problems: [{ path: 'workflow[0].tool.command', message: "'steps.s3000' is undefined: step 's3000' cannot have run before step 's0'", line: 6 }] });
  }, 120_000);
});
