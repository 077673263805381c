// simulatePlaybook / playbookPaths called from a user's test (docs/playbook-dsl.md, "The same in
// your own tests") with input the API does not take. Seen: an outcome that is not ok, error or
// timeout (`{start: 'fail'}`, `['ok', 'errror']`) was taken as an error without a word, so a test
// of the error path passed for a typo; the playbook as js-yaml's load gives it (a "parsed
// playbook" to a reader) threw `TypeError: Cannot read properties of undefined (reading
// 'forEach')`; null outcomes threw `Cannot convert undefined or null to object`; a payload that
// is an array was merged into the workload as keys `0`, `1`, ... and simulated. Each now throws
// what names the field: an InvalidPlaybookError for the playbook, an Error for the outcomes.
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { InvalidPlaybookError, playbookPaths, simulatePlaybook, type SimulatedOutcomes } from '../../../machines/simulate-playbook.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: bad_input, path: audit/simulate-bad-input }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: [ { step: recover, when: "{{ outcome.status == 'error' }}" } ]
  - step: recover
`;

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('the simulation API refuses what it does not take, naming the field', () => {
  it('an outcome other than ok, error or timeout', () => {
    expect(() => simulatePlaybook(YAML, { start: 'fail' } as unknown as SimulatedOutcomes)).toThrow(`outcomes.start: expected 'ok', 'error', 'error:CODE' or 'timeout' (or a list of them), got "fail"`);
    expect(() => simulatePlaybook(YAML, { start: ['ok', 'errror'] } as unknown as SimulatedOutcomes)).toThrow(`outcomes.start[1]: expected 'ok', 'error', 'error:CODE' or 'timeout' (or a list of them), got "errror"`);
    expect(() => simulatePlaybook(YAML, null as unknown as SimulatedOutcomes)).toThrow('outcomes: expected an object of outcomes by step name, got null');
    expect(() => simulatePlaybook(YAML, 'error' as unknown as SimulatedOutcomes)).toThrow('outcomes: expected an object of outcomes by step name, got string');
  });

  it('options that are no object (null threw "Cannot read properties of null")', () => {
    expect(() => simulatePlaybook(YAML, {}, null as never)).toThrow('options: expected an object ({payload, results, ...}), got null');
    expect(() => playbookPaths(YAML, 'x' as never)).toThrow('options: expected an object ({payload, results, ...}), got string');
  });

  it('a payload that is no object (an array was merged into the workload as keys 0, 1, ...)', () => {
    expect(() => simulatePlaybook(YAML, {}, { payload: [1] as never })).toThrow('payload: expected an object (a start\'s payload), got array');
    expect(() => playbookPaths(YAML, { payload: 'x' as never })).toThrow('payload: expected an object (a start\'s payload), got string');
  });

  it('the playbook as a YAML loader gives it is read as its text is', () => {
    const doc = load(YAML);
    expect(simulatePlaybook(doc as never, { start: 'error' })).toMatchObject({ status: 'completed', path: ['start', 'recover'] });
    expect(playbookPaths(doc as never).paths.map((p) => p.path)).toEqual([['start'], ['start', 'recover']]);
    const bad = load(YAML.replace('kind: noop', 'kind: shel')) as never;
    const err = thrown(() => simulatePlaybook(bad));
    expect(err).toBeInstanceOf(InvalidPlaybookError);
    expect((err as Error).message).toMatch(/^invalid playbook: workflow\[0\]\.tool\.kind: must be one of .*did you mean 'shell'/);
  });

  it('something that is no playbook at all', () => {
    for (const given of [42, undefined, null]) {
      const err = thrown(() => simulatePlaybook(given as never));
      expect(err).toBeInstanceOf(InvalidPlaybookError);
      expect((err as Error).message).toMatch(/^invalid playbook: expected the playbook's YAML text or its parsed document, got (number|undefined|null)$/);
    }
  });
});
