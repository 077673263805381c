// Typed inputs (`inputs:`): the registration problems, the one workload check shared by the
// start routes, `svc run --set` and the console, and the reading of typed text.
import { describe, expect, it } from 'vitest';
import { checkInputs } from '../../../src/dsl/check-inputs.ts';
import { parseInputText } from '../../../src/dsl/parse-input-text.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import type { Inputs } from '../../../src/dsl/inputs.schema.ts';

const playbook = (inputs: string, workload = '{}') => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: typed, path: t/typed }
workload: ${workload}
inputs: ${inputs}
workflow:
  - step: start
`;

const problemsOf = (text: string) => {
  const r = parsePlaybook(text);
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`);
};

describe('inputs: at registration', () => {
  it('accepts every credential schema type name and folds defaults into the workload', () => {
    const r = parsePlaybook(
      playbook(
        `{ n: {type: integer, default: 3}, x: {type: number}, s: {type: string, enum: [a, b], default: b, description: "the s"}, b: {type: boolean, required: true}, o: {type: object, default: {k: 1}}, l: {type: array} }`,
        '{ n: 1, other: z }',
      ),
    );
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    expect(r.playbook.workload).toEqual({ n: 3, other: 'z', s: 'b', o: { k: 1 } });
    expect(r.playbook.inputs?.s).toEqual({ type: 'string', enum: ['a', 'b'], default: 'b', description: 'the s' });
  });

  it('names inputs.<name>.<field> for a bad type, a default of the wrong type, enum values of the wrong type, a default outside the enum, an unknown field', () => {
    expect(problemsOf(playbook('{ a: {type: int} }'))).toEqual(["inputs.a.type: must be one of string, integer, boolean, number, array, object (did you mean 'integer'?)"]);
    expect(problemsOf(playbook('{ n: {type: integer, default: "3"} }'))).toEqual(['inputs.n.default: must be integer, got string']);
    expect(problemsOf(playbook('{ n: {type: integer, enum: [1, two, 3.5]} }'))).toEqual(['inputs.n.enum[1]: must be integer, got string', 'inputs.n.enum[2]: must be integer, got number']);
    expect(problemsOf(playbook('{ s: {type: string, enum: [fast, slow], default: quick} }'))).toEqual(['inputs.s.default: must be one of "fast", "slow", got "quick"']);
    expect(problemsOf(playbook('{ s: {type: string, requried: true} }'))).toEqual([expect.stringMatching(/^inputs\.s\.requried: /)]);
    expect(problemsOf(playbook('{ "bad-name": {type: string} }'))).toEqual([expect.stringMatching(/^inputs\["bad-name"\]: must be an identifier/)]);
    expect(problemsOf(playbook('{ s: {type: string, required: yes please} }'))).toEqual([expect.stringMatching(/^inputs\.s\.required: /)]);
  });
});

const INPUTS: Inputs = {
  n: { type: 'integer', required: true },
  ratio: { type: 'number' },
  flag: { type: 'boolean' },
  mode: { type: 'string', enum: ['fast', 'slow'] },
  tags: { type: 'array' },
  opts: { type: 'object' },
};

describe('checkInputs', () => {
  it('passes a workload of the declared types and lets undeclared fields through', () => {
    expect(checkInputs(INPUTS, { n: 3, ratio: 0.5, flag: false, mode: 'slow', tags: [], opts: {}, extra: 'x' })).toEqual([]);
    expect(checkInputs(INPUTS, { n: 3, ratio: 2 })).toEqual([]);
    expect(checkInputs(undefined, { anything: 1 })).toEqual([]);
  });

  it('names each failing field at workload.<name>', () => {
    expect(checkInputs(INPUTS, { ratio: 'x', flag: 'true', mode: 'medium', tags: {}, opts: [], n: 1.5 })).toEqual([
      { path: 'workload.n', message: 'must be integer, got number' },
      { path: 'workload.ratio', message: 'must be number, got string' },
      { path: 'workload.flag', message: 'must be boolean, got string' },
      { path: 'workload.mode', message: 'must be one of "fast", "slow", got "medium"' },
      { path: 'workload.tags', message: 'must be array, got object' },
      { path: 'workload.opts', message: 'must be object, got array' },
    ]);
    expect(checkInputs(INPUTS, {})).toEqual([{ path: 'workload.n', message: 'is required' }]);
    expect(checkInputs(INPUTS, { n: null })).toEqual([{ path: 'workload.n', message: 'must be integer, got null' }]);
  });
});

describe('parseInputText', () => {
  it('reads text as the declared type', () => {
    expect(parseInputText('integer', ' 3 ')).toEqual({ ok: true, value: 3 });
    expect(parseInputText('number', '2.5')).toEqual({ ok: true, value: 2.5 });
    for (const [text, value] of [['-3', -3], ['+.5', 0.5], ['1e3', 1000], ['2.', 2], ['1.5E-2', 0.015]] as const) expect(parseInputText('number', text)).toEqual({ ok: true, value });
    expect(parseInputText('boolean', 'false')).toEqual({ ok: true, value: false });
    expect(parseInputText('array', '[1, "a"]')).toEqual({ ok: true, value: [1, 'a'] });
    expect(parseInputText('object', '{"k": 1}')).toEqual({ ok: true, value: { k: 1 } });
    expect(parseInputText('string', ' 3 ')).toEqual({ ok: true, value: ' 3 ' });
    expect(parseInputText(undefined, '3')).toEqual({ ok: true, value: '3' });
  });

  it('refuses text that is not of the type', () => {
    for (const [type, text] of [['integer', 'abc'], ['integer', '1.5'], ['integer', ''], ['number', 'x1'], ['number', ''], ['number', '0x10'], ['number', '0b1'], ['number', '0o7'], ['number', 'Infinity'], ['boolean', 'yes'], ['array', '{}'], ['object', '[1]'], ['object', '{']] as const) {
      const r = parseInputText(type, text);
      expect(r.ok, `${type} ${text}`).toBe(false);
      if (!r.ok) expect(r.message).toMatch(new RegExp(`^must be ${type}`));
    }
  });
});
