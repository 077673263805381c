// In Jinja `x.none` is the attribute (key) 'none' of x: after `.` any name is an attribute.
// nunjucks lexes `none`, `null`, `true` and `false` as literals, and our parsePostfix took only a
// plain name there, so `{{ workload.none }}` was a syntax error ("expected name as lookup value,
// got none") and a playbook reading such a key could not be registered.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { renderValue } from '../../../src/dsl/render.ts';

const ctx = { workload: { none: 'n', null: 'z', true: 't', false: 'f', nested: { none: { true: 1 } }, list: [{ false: 'a' }, { false: 'b' }] } };
const render = (template: string): unknown => renderValue(template, ctx, 'f');

describe('a key named like a literal, after a dot', () => {
  it.each([
    ['{{ workload.none }}', 'n'],
    ['{{ workload.null }}', 'z'],
    ['{{ workload.true }}|{{ workload.false }}', 't|f'],
    ['{{ workload.nested.none.true }}', 1],
    ['{{ workload.list[1].false }}', 'b'],
    ['{{ workload.none ~ workload.true }}', 'nt'],
    ['{{ workload.nope.none | default("d") }}', 'd'],
    ['{{ workload.none is defined }} {{ workload.nested.true is defined }}', 'true false'],
    ['{% set ns = namespace() %}{% set ns.none = 5 %}{% set ns.true = ns.none + 1 %}{{ ns.true }}', '6'],
  ])('%s is read as an attribute', (template, expected) => {
    expect(render(template)).toBe(expected);
  });

  it('leaves the literals and tests as they were elsewhere', () => {
    expect(render('{{ none is none }} {{ true }} {{ workload.none is none }} {{ [none, true][1] }}')).toBe('true true false true');
  });

  it('registers a playbook whose inputs hold such keys', () => {
    const parsed = parsePlaybook(`apiVersion: svc/v1
kind: Playbook
metadata: { name: keywords, path: audit/keywords }
inputs: { none: { type: string }, true: { type: string } }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo {{ workload.none }} {{ workload.true }}" }
`);
    expect(parsed.ok ? [] : parsed.problems).toEqual([]);
  });
});
