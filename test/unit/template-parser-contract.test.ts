import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TemplateSyntaxError, type Args, type BinaryOp, type Expr, type Stmt } from '../../src/dsl/template-ast.ts';
import { parseTemplate } from '../../src/dsl/template-parser.ts';

// The contract of src/dsl/template-parser.ts, the one adapter over nunjucks' undocumented parser:
// for every construct playbook templates support, the tree (template-ast.ts) it gives, and the
// message and position of what it refuses. A nunjucks upgrade that parses anything differently
// fails here, not in production. Where nunjucks' grammar differs from Jinja's, the case says so:
// this pins what templates mean today.

const ROOT = path.resolve(import.meta.dirname, '../..');

const name = (n: string): Expr => ({ type: 'name', name: n });
const lit = (value: string | number | boolean | null): Expr => ({ type: 'literal', value });
const get = (target: Expr, key: Expr): Expr => ({ type: 'get', target, key });
const slice = (target: Expr, start?: Expr, stop?: Expr, step?: Expr): Expr => ({ type: 'slice', target, start, stop, step });
const neg = (operand: Expr): Expr => ({ type: 'negate', operand });
const args = (positional: Expr[] = [], keywords: [string, Expr][] = []): Args => ({ positional, keywords });
const bin = (op: BinaryOp, left: Expr, right: Expr): Expr => ({ type: 'binary', op, left, right });
const out = (expr: Expr): Stmt => ({ type: 'output', expr });
const text = (t: string): Stmt => ({ type: 'text', text: t });

/** The expression of a template that is exactly one `{{ expr }}`. */
function expr(source: string): Expr | undefined {
  return parseTemplate(source).native;
}

function refusal(source: string): string {
  try {
    parseTemplate(source);
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    return error.message;
  }
  throw new Error(`${source} was parsed`);
}

describe('template parser contract: text and output', () => {
  it('plain text is one text statement, and has no native expression', () => {
    expect(parseTemplate('plain text')).toEqual({ body: [text('plain text')], native: undefined });
  });

  it('one {{ expr }} (whitespace around it aside) is native; anything more is not', () => {
    expect(parseTemplate('{{ x }}')).toEqual({ body: [out(name('x'))], native: name('x') });
    expect(parseTemplate(' {{ x }}\n')).toEqual({ body: [text(' '), out(name('x')), text('\n')], native: name('x') });
    expect(parseTemplate('x={{ x }}')).toEqual({ body: [text('x='), out(name('x'))], native: undefined });
    expect(parseTemplate('{{ a }}{{ b }}').native).toBeUndefined();
  });

  it('comments leave nothing, whitespace control trims the text beside it, raw is text', () => {
    expect(parseTemplate('a{# note #}b').body).toEqual([text('a'), text('b')]);
    expect(parseTemplate('a  {{- x -}}  b').body).toEqual([text('a'), out(name('x')), text('b')]);
    expect(parseTemplate('{%- if a -%} x {%- endif -%}').body).toEqual([{ type: 'if', cond: name('a'), then: [text('x')], otherwise: [] }]);
    expect(parseTemplate('{% raw %}{{ x }}{% endraw %}').body).toEqual([text('{{ x }}')]);
    expect(parseTemplate('line1\n{{ x }}').body).toEqual([text('line1\n'), out(name('x'))]);
  });
});

describe('template parser contract: expressions', () => {
  it('names, attributes and index lookups', () => {
    expect(expr('{{ a.b }}')).toEqual(get(name('a'), lit('b')));
    expect(expr('{{ a["b c"][0] }}')).toEqual(get(get(name('a'), lit('b c')), lit(0)));
    expect(expr('{{ a[i] }}')).toEqual(get(name('a'), name('i')));
    expect(expr('{{ steps.fetch.result.items }}')).toEqual(get(get(get(name('steps'), lit('fetch')), lit('result')), lit('items')));
  });

  // nunjucks has no slices: the adapter's own parsePostfix reads Python's `[start:stop:step]`.
  it('slices: every part optional, any expression as a bound, chained with lookups, calls and filters', () => {
    expect(expr('{{ x[1:2] }}')).toEqual(slice(name('x'), lit(1), lit(2)));
    expect(expr('{{ x[1:] }}')).toEqual(slice(name('x'), lit(1)));
    expect(expr('{{ x[:10] }}')).toEqual(slice(name('x'), undefined, lit(10)));
    expect(expr('{{ x[:] }}')).toEqual(slice(name('x')));
    expect(expr('{{ x[::] }}')).toEqual(slice(name('x')));
    expect(expr('{{ x[::-1] }}')).toEqual(slice(name('x'), undefined, undefined, neg(lit(1))));
    expect(expr('{{ x[-3:-1:2] }}')).toEqual(slice(name('x'), neg(lit(3)), neg(lit(1)), lit(2)));
    expect(expr('{{ x[a:b:c] }}')).toEqual(slice(name('x'), name('a'), name('b'), name('c')));
    expect(expr('{{ x[n - 1 : (y | length)] }}')).toEqual(slice(name('x'), bin('-', name('n'), lit(1)), { type: 'filter', name: 'length', target: name('y'), args: args() }));
    expect(expr('{{ trigger.scheduled_time[:10] }}')).toEqual(slice(get(name('trigger'), lit('scheduled_time')), undefined, lit(10)));
    expect(expr('{{ a.b[1:][0] }}')).toEqual(get(slice(get(name('a'), lit('b')), lit(1)), lit(0)));
    expect(expr('{{ a[1:].c }}')).toEqual(get(slice(name('a'), lit(1)), lit('c')));
    expect(expr('{{ s[:2].upper() }}')).toEqual({ type: 'method', target: slice(name('s'), undefined, lit(2)), name: 'upper', args: args() });
    expect(expr('{{ f(1)[1:] }}')).toEqual(slice({ type: 'call', name: 'f', args: args([lit(1)]), caller: undefined }, lit(1)));
    expect(expr('{{ x[1:] | join }}')).toEqual({ type: 'filter', name: 'join', target: slice(name('x'), lit(1)), args: args() });
    expect(expr('{{ x[y[1:]:] }}')).toEqual(slice(name('x'), slice(name('y'), lit(1))));
    expect(parseTemplate('{% for c in s[::2] %}{{ c }}{% endfor %}').body).toEqual([
      { type: 'for', names: ['c'], iterable: slice(name('s'), undefined, undefined, lit(2)), filter: undefined, body: [out(name('c'))], otherwise: [] },
    ]);
  });

  it('literals: numbers, strings (either quote, escapes), booleans and none in either case', () => {
    expect(expr('{{ 1 }}')).toEqual(lit(1));
    expect(expr('{{ 1.5 }}')).toEqual(lit(1.5));
    expect(expr('{{ "s" }}')).toEqual(lit('s'));
    expect(expr("{{ 'single' }}")).toEqual(lit('single'));
    expect(expr('{{ "esc\\"q" }}')).toEqual(lit('esc"q'));
    expect(expr('{{ "\\n" }}')).toEqual(lit('\n'));
    for (const [source, value] of [['true', true], ['True', true], ['false', false], ['False', false], ['none', null], ['None', null]] as const) {
      expect(expr(`{{ ${source} }}`), source).toEqual(lit(value));
    }
  });

  it('lists, tuples (as lists), groups and dicts with string or name keys', () => {
    expect(expr('{{ [1, 2] }}')).toEqual({ type: 'list', items: [lit(1), lit(2)] });
    expect(expr('{{ (1, 2) }}')).toEqual({ type: 'list', items: [lit(1), lit(2)] });
    expect(expr('{{ (1) }}')).toEqual(lit(1));
    expect(expr('{{ {"a": 1, b: 2} }}')).toEqual({ type: 'dict', pairs: [['a', lit(1)], ['b', lit(2)]] });
  });

  it('filters, chained, with positional and named arguments; a filter binds tighter than +', () => {
    expect(expr('{{ x | default("d") | upper }}')).toEqual({
      type: 'filter',
      name: 'upper',
      target: { type: 'filter', name: 'default', target: name('x'), args: args([lit('d')]) },
      args: args(),
    });
    expect(expr('{{ x | join(", ") }}')).toEqual({ type: 'filter', name: 'join', target: name('x'), args: args([lit(', ')]) });
    expect(expr('{{ x | round(2, method="floor") }}')).toEqual({ type: 'filter', name: 'round', target: name('x'), args: args([lit(2)], [['method', lit('floor')]]) });
    expect(expr('{{ a + b | upper }}')).toEqual(bin('+', name('a'), { type: 'filter', name: 'upper', target: name('b'), args: args() }));
  });

  it('calls of functions and macros, and methods of values', () => {
    expect(expr('{{ range(3) }}')).toEqual({ type: 'call', name: 'range', args: args([lit(3)]), caller: undefined });
    expect(expr('{{ f(a, k=1) }}')).toEqual({ type: 'call', name: 'f', args: args([name('a')], [['k', lit(1)]]), caller: undefined });
    expect(expr('{{ s.upper() }}')).toEqual({ type: 'method', target: name('s'), name: 'upper', args: args() });
    expect(expr('{{ d.get("k", 1) }}')).toEqual({ type: 'method', target: name('d'), name: 'get', args: args([lit('k'), lit(1)]) });
  });

  // Unlike Jinja: among * / // % the later binds tighter, and ~ binds after + and - (docs/playbook-dsl.md says so).
  it('arithmetic and its precedence, as nunjucks parses it', () => {
    expect(expr('{{ 1 + 2 * 3 }}')).toEqual(bin('+', lit(1), bin('*', lit(2), lit(3))));
    expect(expr('{{ (1 + 2) * 3 }}')).toEqual(bin('*', bin('+', lit(1), lit(2)), lit(3)));
    expect(expr('{{ 2 ** 3 ** 2 }}')).toEqual(bin('**', bin('**', lit(2), lit(3)), lit(2)));
    expect(expr('{{ 7 // 2 % 3 - 1 / 4 }}')).toEqual(bin('-', bin('//', lit(7), bin('%', lit(2), lit(3))), bin('/', lit(1), lit(4))));
    expect(expr('{{ 8 / 2 // 3 }}')).toEqual(bin('/', lit(8), bin('//', lit(2), lit(3))));
    expect(expr('{{ 2 * 3 / 4 }}')).toEqual(bin('*', lit(2), bin('/', lit(3), lit(4))));
    expect(expr('{{ "a" ~ b }}')).toEqual(bin('~', lit('a'), name('b')));
    expect(expr('{{ a ~ b + c }}')).toEqual(bin('~', name('a'), bin('+', name('b'), name('c'))));
    expect(expr('{{ a + b ~ c }}')).toEqual(bin('~', bin('+', name('a'), name('b')), name('c')));
    expect(expr('{{ 2 * 10 % 4 }}')).toEqual(bin('*', lit(2), bin('%', lit(10), lit(4))));
    expect(expr('{{ a - b + c }}')).toEqual(bin('+', bin('-', name('a'), name('b')), name('c')));
    expect(parseTemplate('{{ -x }}{{ +x }}').body).toEqual([out({ type: 'negate', operand: name('x') }), out({ type: 'plus', operand: name('x') })]);
    expect(expr('{{ -2 ** 2 }}')).toEqual(bin('**', { type: 'negate', operand: lit(2) }, lit(2)));
  });

  it('comparisons chain into one node; === and !== read as == and !=', () => {
    expect(expr('{{ a < b <= c }}')).toEqual({ type: 'compare', first: name('a'), rest: [{ op: '<', operand: name('b') }, { op: '<=', operand: name('c') }] });
    expect(expr('{{ a == b != c > d >= e }}')).toEqual({
      type: 'compare',
      first: name('a'),
      rest: [
        { op: '==', operand: name('b') },
        { op: '!=', operand: name('c') },
        { op: '>', operand: name('d') },
        { op: '>=', operand: name('e') },
      ],
    });
    expect(expr('{{ a === b }}')).toEqual(expr('{{ a == b }}'));
    expect(expr('{{ a !== b }}')).toEqual(expr('{{ a != b }}'));
  });

  it('and, or, not: not binds tighter than and, and tighter than or; not covers a comparison', () => {
    expect(expr('{{ a and b or not c }}')).toEqual({ type: 'or', left: { type: 'and', left: name('a'), right: name('b') }, right: { type: 'not', operand: name('c') } });
    expect(expr('{{ a or b and c }}')).toEqual({ type: 'or', left: name('a'), right: { type: 'and', left: name('b'), right: name('c') } });
    expect(expr('{{ not a and b }}')).toEqual({ type: 'and', left: { type: 'not', operand: name('a') }, right: name('b') });
    expect(expr('{{ not a == b }}')).toEqual({ type: 'not', operand: { type: 'compare', first: name('a'), rest: [{ op: '==', operand: name('b') }] } });
  });

  it('in and not in', () => {
    expect(expr('{{ x in y }}')).toEqual({ type: 'in', left: name('x'), right: name('y') });
    expect(expr('{{ x not in y }}')).toEqual({ type: 'not', operand: { type: 'in', left: name('x'), right: name('y') } });
    expect(expr('{{ x in y and z }}')).toEqual({ type: 'and', left: { type: 'in', left: name('x'), right: name('y') }, right: name('z') });
  });

  it('if-expressions, with and without else; a filter after else applies to the else branch', () => {
    expect(expr('{{ a if c else b }}')).toEqual({ type: 'conditional', cond: name('c'), then: name('a'), otherwise: name('b') });
    expect(expr('{{ a if c }}')).toEqual({ type: 'conditional', cond: name('c'), then: name('a'), otherwise: undefined });
    expect(expr('{{ a if b else c | upper }}')).toEqual({
      type: 'conditional',
      cond: name('b'),
      then: name('a'),
      otherwise: { type: 'filter', name: 'upper', target: name('c'), args: args() },
    });
  });

  it('tests: by name, with arguments, negated; none/true/false as test names', () => {
    expect(expr('{{ x is defined }}')).toEqual({ type: 'test', name: 'defined', target: name('x'), args: [] });
    expect(expr('{{ x is none }}')).toEqual({ type: 'test', name: 'none', target: name('x'), args: [] });
    expect(expr('{{ x is None }}')).toEqual({ type: 'test', name: 'none', target: name('x'), args: [] });
    expect(expr('{{ x is true }}')).toEqual({ type: 'test', name: 'true', target: name('x'), args: [] });
    expect(expr('{{ x is divisibleby(3) }}')).toEqual({ type: 'test', name: 'divisibleby', target: name('x'), args: [lit(3)] });
    expect(expr('{{ x is not defined }}')).toEqual({ type: 'not', operand: { type: 'test', name: 'defined', target: name('x'), args: [] } });
  });
});

describe('template parser contract: statements', () => {
  it('if / elif / else: elif is an if in the else branch', () => {
    expect(parseTemplate('{% if a %}A{% elif b %}B{% else %}C{% endif %}').body).toEqual([
      { type: 'if', cond: name('a'), then: [text('A')], otherwise: [{ type: 'if', cond: name('b'), then: [text('B')], otherwise: [text('C')] }] },
    ]);
  });

  it('for: one name or several, an else branch, and the loop filter `if`', () => {
    expect(parseTemplate('{% for x in xs %}{{ x }}{% else %}none{% endfor %}').body).toEqual([
      { type: 'for', names: ['x'], iterable: name('xs'), filter: undefined, body: [out(name('x'))], otherwise: [text('none')] },
    ]);
    expect(parseTemplate('{% for k, v in m %}{{ k }}{% endfor %}').body).toEqual([
      { type: 'for', names: ['k', 'v'], iterable: name('m'), filter: undefined, body: [out(name('k'))], otherwise: [] },
    ]);
    expect(parseTemplate('{% for x in xs if x > 1 %}{{ x }}{% endfor %}').body).toEqual([
      { type: 'for', names: ['x'], iterable: name('xs'), filter: { type: 'compare', first: name('x'), rest: [{ op: '>', operand: lit(1) }] }, body: [out(name('x'))], otherwise: [] },
    ]);
  });

  it('set: a name, several names, a namespace attribute, or a block of text', () => {
    expect(parseTemplate('{% set x = 1 %}{% set ns.a = 2 %}').body).toEqual([
      { type: 'set', targets: [{ name: 'x', attribute: undefined }], value: lit(1) },
      { type: 'set', targets: [{ name: 'ns', attribute: 'a' }], value: lit(2) },
    ]);
    expect(parseTemplate('{% set a, b = [1, 2] %}').body).toEqual([
      { type: 'set', targets: [{ name: 'a', attribute: undefined }, { name: 'b', attribute: undefined }], value: { type: 'list', items: [lit(1), lit(2)] } },
    ]);
    expect(parseTemplate('{% set x %}hi {{ y }}{% endset %}').body).toEqual([
      { type: 'set', targets: [{ name: 'x', attribute: undefined }], value: { type: 'block', body: [text('hi '), out(name('y'))] } },
    ]);
  });

  it('macros with defaults, call blocks (the body as `caller`), filter blocks', () => {
    expect(parseTemplate('{% macro m(a, b=2) %}{{ a }}{% endmacro %}{{ m(1) }}').body).toEqual([
      { type: 'macro', macro: { name: 'm', params: [{ name: 'a', fallback: undefined }, { name: 'b', fallback: lit(2) }], body: [out(name('a'))] } },
      out({ type: 'call', name: 'm', args: args([lit(1)]), caller: undefined }),
    ]);
    expect(parseTemplate('{% call m(1) %}body{% endcall %}').body).toEqual([
      out({ type: 'call', name: 'm', args: args([lit(1)]), caller: { name: 'caller', params: [], body: [text('body')] } }),
    ]);
    expect(parseTemplate('{% filter upper %}hi{% endfilter %}').body).toEqual([
      out({ type: 'filter', name: 'upper', target: { type: 'block', body: [text('hi')] }, args: args() }),
    ]);
  });
});

describe('template parser contract: refusals, with nunjucks positions (1-based line and column)', () => {
  it('syntax errors: the message without nunjucks function names, and where', () => {
    expect(refusal('{{ x ')).toBe('expected variable end');
    expect(refusal('{{ }}')).toBe('unexpected token: }} (line 1, column 4)');
    expect(refusal('{{ a b }}')).toBe('expected variable end (line 1, column 6)');
    expect(refusal('line1\n  {{ f(1,, 2) }}')).toBe('unexpected token: , (line 2, column 10)');
    expect(refusal('{{ [1, 2 }}')).toBe('expected comma after expression (line 1, column 4)');
    expect(refusal('{{ {x+1: 2} }}')).toBe('expected colon after dict key (line 1, column 4)');
    expect(refusal('{% if a %}x')).toBe('expected elif, else, or endif, got end of file');
    expect(refusal('{% for x in %}{% endfor %}')).toBe('unexpected token: %} (line 1, column 13)');
    expect(refusal('{% for a.b in xs %}{% endfor %}')).toBe('variable name expected for loop (line 1, column 12)');
    expect(refusal('{% endif %}')).toBe('unknown block tag: endif (line 1, column 4)');
    expect(refusal('{% foo %}')).toBe('unknown block tag: foo (line 1, column 4)');
    expect(refusal('{{ x.1 }}')).toBe('expected name as lookup value, got 1 (line 1, column 6)');
    expect(refusal('{{ x[] }}')).toBe('unexpected token: ] (line 1, column 6)');
    expect(refusal('{{ x[1, 2] }}')).toBe('invalid index (line 1, column 7)');
    expect(refusal('{{ x[1 2] }}')).toBe('expected ] after an index (line 1, column 8)');
    expect(refusal('{{ x[1:2 3] }}')).toBe('expected ] after a slice (line 1, column 10)');
    expect(refusal('{{ x[1:2:3:4] }}')).toBe('expected ] after a slice (line 1, column 11)');
    // A slice is a subscript only: a list literal keeps nunjucks' grammar.
    expect(refusal('{{ [1:2] }}')).toBe('expected comma after expression (line 1, column 4)');
    expect(refusal('{% set x[1:] = 1 %}')).toBe('only a name or a namespace attribute (ns.attr) can be assigned (line 1, column 9)');
  });

  it('tags that need a loader or nunjucks alone has', () => {
    for (const [source, tag] of [
      ['{% include "a" %}', 'include'],
      ['{% extends "a" %}', 'extends'],
      ['{% import "a" as b %}', 'import'],
      ['{% from "a" import b %}', 'from'],
      ['{% block b %}{% endblock %}', 'block'],
      ['{% switch x %}{% case 1 %}{% endswitch %}', 'switch'],
      ['{% asyncEach x in y %}{% endeach %}', 'asyncEach'],
    ]) {
      expect(refusal(source), source).toBe(`'${tag}' is not supported in playbook templates (line 1, column 4)`);
    }
  });

  it('unknown filters and tests, regular expressions, calls and assignments of anything but names', () => {
    expect(refusal('{{ x | nosuch }}')).toBe("unknown filter 'nosuch' (line 1, column 8)");
    expect(refusal('{{ x is nosuch }}')).toBe("unknown test 'nosuch' (line 1, column 9)");
    expect(refusal('{{ x is divisibleby(n=1) }}')).toBe('tests take no named arguments (line 1, column 20)');
    expect(refusal('{{ r/ab/ }}')).toBe('regular expression literals are not supported (line 1, column 4)');
    expect(refusal('{{ (a.b)(1) }}')).toBe('only functions, macros and methods (x.name()) can be called (line 1, column 9)');
    expect(refusal('{% set a.b.c = 1 %}')).toBe('only a name or a namespace attribute (ns.attr) can be assigned (line 1, column 11)');
    expect(refusal('{% set x[0] = 1 %}')).toBe('only a name or a namespace attribute (ns.attr) can be assigned (line 1, column 9)');
    expect(refusal('{% macro m(1) %}{% endmacro %}')).toBe('a macro argument must be a name (line 1, column 12)');
  });

  it('a template nested past the stack is refused, not a crash', () => {
    expect(refusal(`{{ ${'('.repeat(5000)}1${')'.repeat(5000)} }}`)).toBe('the template is nested too deeply');
  });

  it('the same text gives the same tree, and the same refusal, from the cache', () => {
    expect(parseTemplate('{{ cached.value }}')).toBe(parseTemplate('{{ cached.value }}'));
    expect(refusal('{{ x | cachedbad }}')).toBe(refusal('{{ x | cachedbad }}'));
  });
});

describe('template parser contract: one adapter', () => {
  it("the slice override is the adapter's own parsers': nunjucks' parser and nodes are unchanged", async () => {
    const nunjucks: unknown = (await import('nunjucks')).default;
    const parserModule: unknown = Reflect.get(Object(nunjucks), 'parser');
    const parse: unknown = Reflect.get(Object(parserModule), 'parse');
    if (typeof parse !== 'function') throw new Error('nunjucks.parser.parse is missing');
    expect(() => Reflect.apply(parse, parserModule, ['{{ x[:1] }}'])).toThrow(/unexpected token: :/);
    expect(Reflect.get(Object(Reflect.get(Object(nunjucks), 'nodes')), 'Slice')).toBeUndefined();
    expect(expr('{{ x[:1] }}')).toEqual(slice(name('x'), undefined, lit(1)));
  });

  it('no module but src/dsl/template-parser.ts imports nunjucks', () => {
    const importers: string[] = [];
    for (const dir of ['src', 'machines', 'actors', 'gui/src', 'scripts', 'bench']) {
      for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })) {
        if (!entry.isFile() || !/\.tsx?$/.test(entry.name)) continue;
        const file = path.relative(ROOT, path.join(entry.parentPath, entry.name));
        if (/from ['"]nunjucks['"]|import\(['"]nunjucks['"]\)|require\(['"]nunjucks['"]\)/.test(readFileSync(path.join(ROOT, file), 'utf8'))) importers.push(file);
      }
    }
    expect(importers).toEqual(['src/dsl/template-parser.ts']);
  });
});
