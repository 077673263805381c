// Known template sandbox escapes (nunjucks, Jinja2 SSTI, JavaScript prototype tricks), each through
// every syntax a template has: a.b, a["b"], filters, set, macros, for, call blocks. Every one must
// fail with a TemplateError, or render the harmless text Jinja would (an undefined attribute), and
// none may run code, read the process or leave a mark on the prototypes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateCondition, renderValue, TemplateError } from '../../../src/dsl/render.ts';

const CANARY = 'escape-canary-7c1f0e';
const MARK = '__templateEscaped';

const ctx = (): Record<string, unknown> => ({
  workload: {
    who: 'world',
    ids: [1, 2, 3],
    items: [{ a: 1 }, { a: 2 }],
    key: 'constructor',
    proto: '__proto__',
    text: '{"__proto__": {"polluted": "yes"}}',
  },
  keychain: { api: { access_token: 'tok' } },
  steps: { start: { status: 'ok', result: { n: 1 } } },
  loop: { index: 1 },
});

/** JavaScript that, if it ever ran, would mark the global object and read the process. */
const PAYLOAD = `globalThis.${MARK} = true; return process.pid + ' ' + process.env.SVC_TEST_CANARY`;

/** `error`: must throw TemplateError; otherwise the exact (harmless) value Jinja semantics give. */
type Expectation = 'error' | { value: unknown };
const ERROR: Expectation = 'error';
const value = (v: unknown): Expectation => ({ value: v });

const corpus: [string, Expectation][] = [
  // The payloads: a global function's constructor is Function.
  [`{{ range.constructor("${PAYLOAD}")() }}`, ERROR],
  ["{{ range.constructor('return process.env.SVC_ENCRYPTION_KEY')() }}", ERROR],
  ['{{ range.constructor }}', ERROR],
  [`{{ cycler.constructor("${PAYLOAD}")() }}`, ERROR],
  [`{{ joiner.constructor("${PAYLOAD}")() }}`, ERROR],
  // Jinja2 SSTI: globals of helper objects, the class hierarchy.
  ["{{ cycler.__init__.__globals__.os.popen('id').read() }}", ERROR],
  ['{{ joiner.__init__.__globals__ }}', ERROR],
  ["{{ lipsum.__globals__['os'].popen('id').read() }}", ERROR],
  ['{{ namespace.__init__.__globals__ }}', ERROR],
  ['{{ "".__class__.__mro__[1].__subclasses__() }}', ERROR],
  ["{{ ''.__class__.__base__.__subclasses__()[40]('/etc/passwd').read() }}", ERROR],
  ["{{ config.__class__.__init__.__globals__['os'].popen('id').read() }}", ERROR],
  ["{{ request.application.__globals__.__builtins__.__import__('os').popen('id').read() }}", ERROR],
  ['{{ self._TemplateReference__context.cycler.__init__.__globals__.os }}', ERROR],
  ['{{ self }}', ERROR],
  ['{{ caller }}', ERROR],
  ['{{ caller.__globals__ }}', ERROR],
  ['{% set x = "a" %}{{ x.__class__ }}', ERROR],
  // JavaScript: a value's constructor's constructor is Function, through every syntax.
  [`{{ ''.constructor.constructor("${PAYLOAD}")() }}`, ERROR],
  [`{{ 'a'.constructor.constructor("${PAYLOAD}")() }}`, ERROR],
  [`{{ [].constructor.constructor("${PAYLOAD}")() }}`, ERROR],
  [`{{ {}.constructor.constructor("${PAYLOAD}")() }}`, ERROR],
  ['{{ workload.who.constructor }}', ERROR],
  ["{{ workload['constructor'] }}", ERROR],
  ['{{ workload["__proto__"] }}', ERROR],
  ['{{ workload.__proto__.constructor }}', ERROR],
  ['{{ workload.ids.constructor.prototype }}', ERROR],
  ['{{ workload.ids.__defineGetter__ }}', ERROR],
  ["{{ workload[['constructor']] }}", ERROR],
  ["{{ workload[{'toString': 'x'}] }}", ERROR],
  ["{{ workload['const' ~ 'ructor'] }}", ERROR],
  ['{{ workload[workload.key] }}', ERROR],
  ['{{ workload[workload.proto] }}', ERROR],
  ['{{ steps.start.result.constructor.name }}', ERROR],
  ['{{ keychain.api.constructor }}', ERROR],
  ['{{ keychain.__proto__ }}', ERROR],
  ['{{ loop.constructor }}', ERROR],
  ['{{ "a".toString.call }}', ERROR],
  ['{{ workload.who.valueOf() }}', ERROR],
  ['{{ workload.who.format }}', ERROR],
  ['{{ "{0.__class__}".format(1) }}', ERROR],
  ['{{ "%s" % workload.who }}', ERROR],
  [`{{ [1].fill.constructor("${PAYLOAD}")() }}`, ERROR],
  [`{{ (workload.ids | first).constructor.constructor("${PAYLOAD}")() }}`, ERROR],
  // Globals of the host.
  ['{{ process.pid }}', ERROR],
  ['{{ process }}', ERROR],
  ['{{ globalThis.process.env }}', ERROR],
  ['{{ global.process.mainModule }}', ERROR],
  ["{{ require('child_process') }}", ERROR],
  ["{{ import('fs') }}", ERROR],
  ['{{ this.constructor }}', ERROR],
  // Filters as gadgets.
  ["{{ workload | attr('constructor') }}", ERROR],
  ["{{ workload | attr('__proto__') }}", ERROR],
  ["{{ workload.ids | map('constructor') | list }}", ERROR],
  ["{{ workload.items | map(attribute='constructor') | list }}", ERROR],
  ["{{ workload.items | map(attribute='__proto__.polluted') | list }}", ERROR],
  ["{{ workload.items | selectattr('__proto__') | list }}", ERROR],
  ["{{ workload.items | rejectattr('constructor') | list }}", ERROR],
  ["{{ workload.items | sort(attribute='constructor') }}", ERROR],
  ["{{ workload.items | sum(attribute='constructor.length') }}", ERROR],
  ["{{ workload.items | join(attribute='constructor') }}", ERROR],
  ["{{ workload.items | groupby('constructor') }}", ERROR],
  ['{{ workload.who | constructor }}', ERROR],
  ["{{ workload.ids | select('constructor') | list }}", ERROR],
  ['{{ workload is constructor }}', ERROR],
  ['{% filter constructor %}x{% endfilter %}', ERROR],
  // set, for, macros, call blocks.
  [`{% set f = ''.constructor.constructor %}{{ f("${PAYLOAD}")() }}`, ERROR],
  ['{% set c = workload.constructor %}{{ c }}', ERROR],
  ['{% set workload.who = "x" %}{{ workload.who }}', ERROR],
  ['{% set workload.__proto__.polluted = "yes" %}', ERROR],
  ['{% set ns = namespace() %}{% set ns.__proto__ = {"polluted": "yes"} %}', ERROR],
  ['{% set ns = namespace() %}{% set ns.constructor = 1 %}', ERROR],
  ['{% set ns = namespace() %}{{ ns }}', ERROR],
  ['{% set ns = namespace() %}{% set ns.self = ns %}', ERROR],
  ['{% for k in workload.constructor %}{{ k }}{% endfor %}', ERROR],
  [`{% for c in [].constructor.constructor("${PAYLOAD}")() %}{{ c }}{% endfor %}`, ERROR],
  ['{% for x in workload.ids %}{{ loop.__proto__ }}{% endfor %}', ERROR],
  ['{% for k, v in workload %}{{ v.constructor }}{% endfor %}', ERROR],
  [`{% macro m(x) %}{{ x.constructor.constructor("${PAYLOAD}")() }}{% endmacro %}{{ m('a') }}`, ERROR],
  ["{% macro m(x=''.constructor) %}{{ x }}{% endmacro %}{{ m() }}", ERROR],
  ['{% macro m() %}{% endmacro %}{{ m.constructor }}', ERROR],
  ['{% macro m() %}{% endmacro %}{{ m }}', ERROR],
  ['{% macro m() %}{{ caller.constructor }}{% endmacro %}{% call m() %}x{% endcall %}', ERROR],
  // Prototype pollution through literals, dict(), fromjson: the keys stay data.
  ['{% set x = {"__proto__": {"polluted": "yes"} } %}{{ {}.polluted is defined }}{{ x.polluted is defined }}', value('falsefalse')],
  ['{{ dict(__proto__={"polluted": "yes"}).polluted }}', ERROR],
  ['{{ (workload.text | fromjson).polluted }}', ERROR],
  ['{{ {"toJSON": "x", "valueOf": "y"} | tojson }}', value('{"toJSON":"x","valueOf":"y"}')],
  // Tags that would reach a loader, and syntax nunjucks alone has.
  ["{% include '/etc/passwd' %}", ERROR],
  ["{% import 'x' as y %}", ERROR],
  ["{% from 'x' import y %}", ERROR],
  ["{% extends 'base' %}", ERROR],
  ['{% block b %}{% endblock %}', ERROR],
  ['{{ r/a/.constructor }}', ERROR],
  ["{{ workload.who | replace(r/o/g, 'x') }}", ERROR],
  // Exhaustion: output size, range, repetition, loops, recursion, nesting.
  ["{{ 'x' * 100000000 }}", ERROR],
  ['{{ [1] * 100000000 }}', ERROR],
  ['{{ range(100000000) | length }}', ERROR],
  [`{{ 'ab'${" | replace('', 'xxxxxxxxxx')".repeat(7)} }}`, ERROR],
  ['{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}', ERROR],
  ['{% macro r(n) %}{{ r(n) }}{% endmacro %}{{ r(1) }}', ERROR],
  [`{{ ${'('.repeat(5000)}1${')'.repeat(5000)} }}`, ERROR],
];

const hasMark = () => Object.hasOwn(globalThis, MARK);

let previousCanary: string | undefined;
beforeAll(() => {
  previousCanary = process.env.SVC_TEST_CANARY;
  process.env.SVC_TEST_CANARY = CANARY;
});
afterAll(() => {
  if (previousCanary === undefined) delete process.env.SVC_TEST_CANARY;
  else process.env.SVC_TEST_CANARY = previousCanary;
});

describe('template escape corpus', () => {
  it('holds at least 90 payloads', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(90);
  });

  it.each(corpus)('%s', (template, expected) => {
    let outcome: { value: unknown } | TemplateError;
    try {
      outcome = { value: renderValue(template, ctx(), 'tool[0].command') };
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      outcome = error;
    }
    expect(hasMark(), 'code ran').toBe(false);
    if (outcome instanceof TemplateError) {
      expect(expected, `failed with: ${outcome.message}`).toBe('error');
      expect(outcome.field).toBe('tool[0].command');
      expect(outcome.message).not.toContain(CANARY);
      expect(outcome.message).not.toContain(String(process.pid));
    } else {
      expect(expected, `rendered ${JSON.stringify(outcome.value)}`).not.toBe('error');
      expect(outcome).toEqual(expected);
    }
  });

  it('fails the same way as a condition, a nested value and a native value', () => {
    expect(() => evaluateCondition("range.constructor('return process.pid')()", ctx(), 'next[0].when')).toThrow(TemplateError);
    expect(() => evaluateCondition('workload.constructor', ctx(), 'next[0].when')).toThrow(TemplateError);
    expect(() => renderValue({ env: { A: ['{{ workload.__proto__ }}'] } }, ctx(), 'tool[0]')).toThrow(/template error in tool\[0\]\.env\.A\[0\]/);
    expect(hasMark()).toBe(false);
  });

  it('leaves no mark on the prototypes or the global object', () => {
    for (const [template] of corpus) {
      try {
        renderValue(template, ctx(), 'f');
      } catch {
        // Failing is what most of them do; the checks below are what matters here.
      }
    }
    const probes: object[] = [Object.prototype, Array.prototype, String.prototype, Function.prototype, {}, []];
    for (const probe of probes) expect(Reflect.get(probe, 'polluted'), String(probe)).toBeUndefined();
    expect(hasMark()).toBe(false);
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });
});
