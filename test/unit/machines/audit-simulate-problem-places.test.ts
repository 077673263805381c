// An invalid playbook given to simulatePlaybook / playbookPaths (a user's own test, as
// docs/playbook-dsl.md shows) threw 'invalid playbook: workflow[1].tool.metod: unknown field …'
// with no line or column, where registration, `svc simulate` and the console's editor place every
// problem in the text (parsePlaybook's problems carry line and column). The Error now says where
// (`13:7: workflow[1].tool.metod: …`) and carries the problems as registration answers them.
import { describe, expect, it } from 'vitest';
import { InvalidPlaybookError, playbookFromYaml, playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const BAD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: bad, path: audit/bad }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: nowhere
  - step: call
    tool:
      name: c
      kind: http
      url: "http://127.0.0.1:1/"
      metod: POST
`;

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('nothing thrown');
};

describe('an invalid playbook in a simulation', () => {
  const registration = parsePlaybook(BAD);
  if (registration.ok) throw new Error('fixture must be invalid');

  it('names each problem with its line and column, as registration places it', () => {
    expect(registration.problems.map((p) => [p.path, p.line, p.column])).toEqual([
      ['workflow[1].tool.metod', 13, 7],
      ['workflow[0].next', 7, 5],
    ]);
    for (const call of [() => simulatePlaybook(BAD), () => playbookPaths(BAD), () => playbookFromYaml(BAD)]) {
      const err = thrown(call);
      expect(err).toBeInstanceOf(InvalidPlaybookError);
      expect(err).toBeInstanceOf(Error);
      const message = (err as Error).message;
      expect(message).toBe("invalid playbook: 13:7: workflow[1].tool.metod: unknown field 'metod' (did you mean 'method'?); 7:5: workflow[0].next: arc to unknown step 'nowhere'");
      expect((err as InvalidPlaybookError).problems).toEqual(registration.problems);
    }
  });
});
