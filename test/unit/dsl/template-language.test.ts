// The template language playbooks get (Jinja2 over plain data): statements, expressions, filters,
// tests, methods, scoping, and the limits every render runs under.
import { describe, expect, it } from 'vitest';
import { renderValue, TemplateError } from '../../../src/dsl/render.ts';
import { MAX_MACRO_DEPTH } from '../../../src/dsl/template-interpreter.ts';
import { MAX_RANGE_ITEMS, MAX_RENDER_STEPS, MAX_RENDERED_CHARS } from '../../../src/dsl/template-values.ts';

const ctx: Record<string, unknown> = {
  workload: { who: 'world', n: [3, 1, 2], d: { b: 2, a: 1 }, s: ' Hi There ', users: [{ name: 'ann', age: 31 }, { name: 'bob', age: 17 }], nothing: null },
  steps: { start: { status: 'ok', result: { stdout: 'a\nb\n' } } },
};

const render = (template: string): unknown => renderValue(template, ctx, 'f');

function failure(template: string, path = 'tool[0].command'): string {
  try {
    renderValue(template, ctx, path);
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    expect(error.field).toBe(path);
    return error.detail;
  }
  throw new Error(`expected a TemplateError for ${template}`);
}

describe('statements', () => {
  it.each([
    ['{% if workload.who == "x" %}a{% elif workload.n %}b{% else %}c{% endif %}', 'b'],
    ['{% if workload.nothing %}a{% else %}c{% endif %}', 'c'],
    ['{% for x in workload.n %}{{ loop.index }}:{{ x }}{% if not loop.last %},{% endif %}{% endfor %}', '1:3,2:1,3:2'],
    ['{% for x in workload.n %}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first }}{{ loop.length }} {% endfor %}', '03true3 12false3 21false3 '],
    ['{% for x in workload.n %}{{ loop.previtem | default("-") }}{{ loop.nextitem | default("-") }} {% endfor %}', '-1 32 1- '],
    ['{% for x in [] %}a{% else %}empty{% endfor %}', 'empty'],
    ['{% for x in workload.missing | default([]) %}a{% else %}nothing{% endfor %}', 'nothing'],
    ['{% for k in workload.d %}{{ k }}{% endfor %}', 'ba'],
    ['{% for k, v in workload.d %}{{ k }}={{ v }};{% endfor %}', 'b=2;a=1;'],
    ['{% for k, v in workload.d | dictsort %}{{ k }}={{ v }};{% endfor %}', 'a=1;b=2;'],
    ['{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}', '3 7 '],
    ['{% for c in "ab" %}[{{ c }}]{% endfor %}', '[a][b]'],
    ['{% for u in workload.users if u.age > 18 %}{{ u.name }}{{ loop.length }}{% endfor %}', 'ann1'],
    ['{% for x in (workload.n if true) %}{{ x }}{% endfor %}', '312'],
    ['{% set x = 2 %}{% set y, z = [3, 4] %}{{ x * y * z }}', '24'],
    ['{% set block %}{{ workload.who }}!{% endset %}{{ block | upper }}', 'WORLD!'],
    ['{% filter upper %}hi {{ workload.who }}{% endfilter %}', 'HI WORLD'],
    ['{% macro greet(name, punct="!") %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet("a") }} {{ greet("b", punct="?") }} {{ greet(name="c") }}', 'Hi a! Hi b? Hi c!'],
    ['{% macro list(items) %}{% for i in items %}<{{ i }}>{% endfor %}{% endmacro %}{{ list(workload.n) }}', '<3><1><2>'],
    ['{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap("b") %}{{ workload.who }}{% endcall %}', '<b>world</b>'],
    ['{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * (fact(n - 1) | int) }}{% endif %}{% endmacro %}{{ fact(5) }}', '120'],
    ['a {#- a comment -#} b', 'ab'],
    ['{% raw %}{{ kept }}{% endraw %}', '{{ kept }}'],
    ['x\n  {%- if true %} y {% endif -%}\n  z', 'x y z'],
    ['{{- " a " -}}', ' a '],
  ])('%s', (template, expected) => {
    expect(render(template)).toBe(expected);
  });

  it('keeps Jinja scoping: a set inside a loop stays there, a namespace carries across iterations', () => {
    expect(render('{% set total = 0 %}{% for x in workload.n %}{% set total = total + x %}{% endfor %}{{ total }}')).toBe('0');
    expect(render('{% set ns = namespace(total=0, seen=[]) %}{% for x in workload.n %}{% set ns.total = ns.total + x %}{% set ns.seen = ns.seen + [x] %}{% endfor %}{{ ns.total }} {{ ns.seen }}')).toBe(
      '6 [3,1,2]',
    );
    expect(render('{% for x in [1] %}{% set inner = 5 %}{% endfor %}{{ inner | default("") }}')).toBe('');
    expect(render('{% for x in [1, 2] %}{% for y in ["a"] %}{{ loop.index }}{{ y }}{% endfor %}{{ loop.index }} {% endfor %}')).toBe('1a1 1a2 ');
  });

  it('refuses what has no meaning here, naming it', () => {
    expect(failure("{% include 'x' %}")).toMatch(/'include' is not supported/);
    expect(failure('{% set a.b.c = 1 %}')).toMatch(/only a name or a namespace attribute/);
    expect(failure('{% set workload.x = 1 %}')).toMatch(/'workload' is not a namespace/);
    expect(failure('{% for a, b in workload.n %}{% endfor %}')).toMatch(/does not unpack into 2 names/);
    expect(failure('{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}')).toMatch(/macro 'm' takes at most 1 arguments/);
    expect(failure('{% macro m(a) %}{% endmacro %}{{ m(b=1) }}')).toMatch(/macro 'm' has no argument 'b'/);
    expect(failure('{% call nope() %}x{% endcall %}')).toMatch(/needs a macro/);
  });
});

describe('expressions', () => {
  it.each([
    ['{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2 ** 10 }} {{ 7 / 2 }} {{ 1 + 2 * 3 - 4 }}', '3 -4 2 -2 1024 3.5 3'],
    ['{{ "a" ~ 1 ~ none ~ true }}', 'a1true'],
    ['{{ "ab" + "cd" }} {{ [1] + [2] }} {{ "ab" * 2 }} {{ [0] * 3 }}', 'abcd [1,2] abab [0,0,0]'],
    ['{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ "a" < "b" }} {{ [1, 2] < [1, 3] }}', 'true false true true'],
    ['{{ 1 == 1.0 }} {{ "1" == 1 }} {{ [1, {"a": 2}] == [1, {"a": 2}] }} {{ none != false }}', 'true false true true'],
    ['{{ 3 in workload.n }} {{ "or" in workload.who }} {{ "a" in workload.d }} {{ "z" not in workload.d }}', 'true true true true'],
    ['{{ workload.nothing or "fallback" }} {{ workload.who and 5 }} {{ 0 and x.y }} {{ not workload.n }}', 'fallback 5 0 false'],
    ['{{ "yes" if workload.who == "world" else "no" }} [{{ "x" if false }}]', 'yes []'],
    ['{{ True }} {{ False }} [{{ None }}] [{{ none }}]', 'true false [] []'],
    ['{{ workload.n[0] }} {{ workload.n[-1] }} {{ workload.n.length }} {{ workload.who[1] }} {{ workload["who"] }}', '3 2 3 o world'],
    ['{{ -workload.n[0] }} {{ +2 }}', '-3 2'],
    ['{{ (1, 2) }} {{ {"a": 1, b: 2} }}', '[1,2] {"a":1,"b":2}'],
    ['{{ workload.d }} {{ workload.n }}', '{"b":2,"a":1} [3,1,2]'],
  ])('%s', (template, expected) => {
    expect(render(template)).toBe(expected);
  });

  it.each([
    ['{{ workload.who is string }} {{ 1 is number }} {{ 1.5 is float }} {{ 2 is integer }} {{ true is boolean }}', 'true true true true true'],
    ['{{ workload.x is defined }} {{ workload.x is undefined }} {{ workload.nothing is none }} {{ workload.nothing is None }}', 'false true true true'],
    ['{{ workload.d is mapping }} {{ workload.n is iterable }} {{ workload.n is sequence }} {{ workload.who is callable }}', 'true true true false'],
    ['{{ 4 is even }} {{ 3 is odd }} {{ 9 is divisibleby(3) }} {{ 3 is not even }} {{ true is true }} {{ 0 is false }}', 'true true true true true false'],
    ['{{ 3 is eq(3) }} {{ 3 is ne(4) }} {{ 3 is lt(4) }} {{ 3 is ge(3) }} {{ 3 is in(workload.n) }} {{ "ab" is lower }} {{ "AB" is upper }}', 'true true true true true true true'],
  ])('tests: %s', (template, expected) => {
    expect(render(template)).toBe(expected);
  });

  it('refuses mixed-type arithmetic and comparison, division by zero, unknown names of functions and methods', () => {
    expect(failure('{{ "a" + 1 }}')).toBe('unsupported operand types for +: string and number');
    expect(failure('{{ workload.missing + 1 }}')).toBe("'workload.missing' is undefined: 'workload' has no attribute 'missing'");
    expect(failure('{{ (workload.missing | default([])) + 1 }}')).toBe('unsupported operand types for +: list and number');
    expect(failure('{{ 1 / 0 }}')).toBe('division by zero');
    expect(failure('{{ 1 % 0 }}')).toBe('division by zero');
    expect(failure('{{ "a" < 1 }}')).toBe('cannot compare string with number');
    expect(failure('{{ lipsum(2) }}')).toBe("unknown function 'lipsum'");
    expect(failure('{{ workload.who.encode() }}')).toBe("string has no method 'encode'");
    expect(failure('{{ workload.n.append(4) }}')).toBe("list has no method 'append'");
    expect(failure('{{ workload.n[0](1) }}')).toMatch(/only functions, macros and methods/);
    expect(failure('{{ workload.who(1) }}')).toBe("mapping has no method 'who'");
    expect(failure('{{ "x" in 1 }}')).toMatch(/'in' needs a string, list or mapping/);
    expect(failure('{{ 1 in "x" }}')).toMatch(/'in <string>' needs a string/);
  });
});

describe('slices (Python)', () => {
  it.each([
    ['{{ "2024-05-01T10:00:00Z"[:10] }}', '2024-05-01'],
    ['{{ workload.who[1:3] }}|{{ workload.who[3:] }}|{{ workload.who[:] }}|{{ workload.who[-3:] }}|{{ workload.who[:-3] }}', 'or|ld|world|rld|wo'],
    ['{{ workload.who[::2] }}|{{ workload.who[::-1] }}|{{ workload.who[3:0:-1] }}|{{ workload.who[-1:-4:-2] }}|{{ workload.who[1::-1] }}', 'wrd|dlrow|lro|dr|ow'],
    ['[{{ workload.who[10:] }}][{{ workload.who[-10:2] }}][{{ workload.who[2:1] }}][{{ workload.who[:10:-1] }}][{{ workload.who[10::-2] }}]', '[][wo][][][drw]'],
    ['{{ workload.n[1:] }} {{ workload.n[:-1] }} {{ workload.n[::-1] }} {{ workload.n[-2::-1] }} {{ workload.n[5:] }} {{ workload.n[-9:9:2] }}', '[1,2] [3,1] [2,1,3] [1,3] [] [3,2]'],
    ['{{ workload.n[None:none] }} {{ workload.n[true:] }} {{ workload.n[workload.n|length - 1:] }}', '[3,1,2] [1,2] [2]'],
    ['{{ workload.users[1:][0].name }} {{ workload.who[1:].upper() }} {{ workload.n[::-1] | join("-") }} {{ workload.n[1:] | length }}', 'bob ORLD 2-1-3 2'],
    ['{% for c in workload.who[::2] %}<{{ c }}>{% endfor %}', '<w><r><d>'],
    ['{{ workload.missing[:2] | default("none") }} {{ workload.missing[:2] is defined }}', 'none false'],
  ])('%s', (template, expected) => {
    expect(render(template)).toBe(expected);
  });

  it('a lone slice is native: a list slice stays a list, a string slice a string', () => {
    expect(render('{{ workload.n[:10] }}')).toEqual([3, 1, 2]);
    expect(render('{{ workload.n[1:] }}')).toEqual([1, 2]);
    expect(render('{{ workload.users[:1] }}')).toEqual([{ name: 'ann', age: 31 }]);
    expect(render('{{ workload.who[:3] }}')).toBe('wor');
    expect(render(' {{ workload.n[5:] }} ')).toEqual([]);
    expect(render('{{ workload.n[1:][0] }}')).toBe(1);
  });

  it('refuses step 0, a bound that is not an integer, and slicing what is not a string or list', () => {
    expect(failure('{{ workload.n[::0] }}')).toBe('slice step cannot be zero');
    expect(failure('{{ workload.who[1:2:0] }}')).toBe('slice step cannot be zero');
    expect(failure('{{ workload.n[1.5:] }}')).toBe('slice indices must be integers or none, not a fraction');
    expect(failure('{{ workload.n[:"2"] }}')).toBe('slice indices must be integers or none, not string');
    expect(failure('{{ workload.users[0].age[1:] }}')).toBe("cannot slice number ('workload.users[0].age'): only a string or a list can be sliced");
    expect(failure('{{ workload.d[:1] }}')).toBe("cannot slice mapping ('workload.d'): only a string or a list can be sliced");
    expect(failure('{{ workload.nothing[:1] }}')).toBe("cannot slice none ('workload.nothing'): only a string or a list can be sliced");
    expect(failure('{{ workload.missing[:1] }}')).toBe("'workload.missing' is undefined: 'workload' has no attribute 'missing'");
    expect(failure('{{ workload.n[1:][5] }}')).toBe("'workload.n[1:][5]' is undefined: 'workload.n[1:]' has no item 5");
    expect(failure('{{ workload.n[:undefined_name] }}')).toBe("'undefined_name' is undefined");
  });
});

describe('filters', () => {
  it.each([
    ['{{ workload.n | length }} {{ workload.d | count }} {{ "abc" | length }} {{ workload.missing | default([]) | length }}', '3 2 3 0'],
    ['{{ workload.missing | default("d") }} {{ workload.nothing | default("d") }}|{{ "" | d("e", true) }}', 'd |e'],
    ['{{ workload.s | trim }}|{{ "xxhixx" | trim("x") }}|{{ workload.who | upper }}|{{ "ABC" | lower }}', 'Hi There|hi|WORLD|abc'],
    ['{{ "hello world" | capitalize }} {{ "hello wORLD-x" | title }} {{ "a b c" | wordcount }}', 'Hello world Hello World-X 3'],
    // Jinja's title filter begins words after spaces, hyphens and brackets only; str.title (the method) after any non-letter.
    ['{{ "it\'s o\'neil (mcdonald)" | title }}|{{ "it\'s".title() }}', "It's O'neil (Mcdonald)|It'S"],
    ['{{ workload.n | join(",") }} {{ workload.users | join(", ", attribute="name") }}', '3,1,2 ann, bob'],
    ['{{ workload.n | first }} {{ workload.n | last }} {{ "abc" | first }} {{ workload.n | list }}', '3 2 a [3,1,2]'],
    ['{{ workload.n | sort }} {{ workload.n | sort(reverse=true) }} {{ ["b", "A", "c"] | sort }} {{ workload.users | sort(attribute="age") | map(attribute="name") | list }}', '[1,2,3] [3,2,1] ["A","b","c"] ["bob","ann"]'],
    ['{{ [1, 2, 1, 3] | unique }} {{ ["a", "A"] | unique }} {{ workload.n | reverse }} {{ "abc" | reverse }}', '[1,2,3] ["a"] [2,1,3] cba'],
    ['{{ "a-b-a" | replace("a", "x") }} {{ "a-b-a" | replace("a", "x", 1) }}', 'x-b-x x-b-a'],
    ['{{ 3.7 | round }} {{ 3.14159 | round(2) }} {{ 2.5 | round }} {{ 3.1 | round(method="ceil") }} {{ -3 | abs }}', '4 3.14 2 4 3'],
    ['{{ "42" | int }} {{ "3.9" | int }} {{ "x" | int }} {{ "x" | int(7) }} {{ "ff" | int(base=16) }} {{ "2.5" | float }} {{ true | int }}', '42 3 0 7 255 2.5 1'],
    ['{{ 5 | string }} {{ workload.n | string }} {{ workload.n | tojson }} {{ workload.d | tojson(2) }}', '5 [3,1,2] [3,1,2] {\n  "b": 2,\n  "a": 1\n}'],
    ['{{ (\'{"a": [1]}\' | fromjson).a }} {{ "user:pass" | b64encode }} {{ "dXNlcjpwYXNz" | b64decode }}', '[1] dXNlcjpwYXNz user:pass'],
    ['{{ workload.d | dictsort }} {{ workload.d | dictsort(by="value", reverse=true) }}', '[["a",1],["b",2]] [["b",2],["a",1]]'],
    ['{{ workload.d | items }} {{ workload.d | keys }} {{ workload.d | values }}', '[["b",2],["a",1]] ["b","a"] [2,1]'],
    ['{{ workload.n | min }} {{ workload.n | max }} {{ workload.n | sum }} {{ workload.users | sum(attribute="age") }} {{ workload.users | max(attribute="age") | attr("name") }}', '1 3 6 48 ann'],
    ['{{ workload.users | map(attribute="name") | list }} {{ ["a", "b"] | map("upper") | list }} {{ [" a "] | map("trim") | join }}', '["ann","bob"] ["A","B"] a'],
    ['{{ range(6) | select("odd") | list }} {{ range(6) | reject("odd") | list }} {{ [0, 1, none, "x"] | select | list }}', '[1,3,5] [0,2,4] [1,"x"]'],
    ['{{ workload.users | selectattr("age", "gt", 18) | map(attribute="name") | list }} {{ workload.users | rejectattr("age", "gt", 18) | map(attribute="name") | join }}', '["ann"] bob'],
    ['{{ range(5) | batch(2) }} {{ range(5) | batch(2, 0) }} {{ range(5) | slice(2) }}', '[[0,1],[2,3],[4]] [[0,1],[2,3],[4,0]] [[0,1,2],[3,4]]'],
    ['{{ "hello world foo" | truncate(9) }} {{ "hello world foo" | truncate(9, true) }} {{ "short" | truncate(9) }}', 'hello... hello ... short'],
    ['{{ "a\nb\n\nc" | indent(2) }}|{{ "a\nb" | indent(2, true) }}', 'a\n  b\n\n  c|  a\n  b'],
    ['{{ "<a href=\'x\'>&</a>" | e }} {{ "<b>" | escape }} {{ "<b>" | safe }}', '&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt; &lt;b&gt; <b>'],
    ['{{ {"a b": 1, "c": "d/é"} | urlencode }} {{ "a b&c" | urlencode }}', 'a%20b=1&c=d/%C3%A9 a%20b%26c'],
    ['{{ "x" | center(5) }}|', '  x  |'],
    ['{{ workload.d | attr("a") }} {{ workload.n | attr(0) }}', '1 3'],
  ])('%s', (template, expected) => {
    expect(render(template)).toBe(expected);
  });

  it('quote makes any value one POSIX shell word', () => {
    expect(render('{{ "plain" | quote }}')).toBe("'plain'");
    expect(render(`{{ "it's $(id); \`id\` \\"x\\" \\\\ \n" | quote }}`)).toBe(`'it'\\''s $(id); \`id\` "x" \\ \n'`);
    expect(render('{{ "" | quote }} {{ workload.missing | default(none) | quote }} {{ 3 | quote }} {{ workload.n | quote }}')).toBe(`'' '' '3' '[3,1,2]'`);
    expect(() => renderValue('{{ x | quote }}', { x: 'a\u0000b' }, 'f')).toThrow(/a shell word cannot hold a NUL character/);
  });

  it('refuses an unknown filter or argument, naming it', () => {
    expect(failure('{{ workload.who | shout }}')).toBe("unknown filter 'shout' (line 1, column 19)");
    expect(failure('{{ workload.n | map("shout") | list }}')).toBe("unknown filter 'shout'");
    expect(failure('{{ workload.n | select("shout") | list }}')).toBe("unknown test 'shout'");
    expect(failure('{{ workload.n | join(",", nope=1) }}')).toBe("filter 'join' has no argument 'nope'");
    expect(failure('{{ workload.n | length(1) }}')).toBe("filter 'length' takes at most 0 arguments");
    expect(failure('{{ "x" | fromjson }}')).toBe('fromjson: the value is not valid JSON');
    expect(failure('{{ ["a", 1] | sort }}')).toBe('cannot compare number with string');
  });
});

describe('methods', () => {
  it.each([
    ['{{ workload.s.strip() }}|{{ workload.s.lstrip() }}|{{ workload.s.rstrip() }}|{{ "xxaxx".strip("x") }}', 'Hi There|Hi There | Hi There|a'],
    ['{{ workload.s.split() }} {{ "a,b,,c".split(",") }} {{ "a b c".split(" ", 1) }} {{ "a\nb".splitlines() }}', '["Hi","There"] ["a","b","","c"] ["a","b c"] ["a","b"]'],
    ['{{ workload.who.upper() }} {{ "AB".lower() }} {{ "ab cd".title() }} {{ "aB".capitalize() }}', 'WORLD ab Ab Cd Ab'],
    ['{{ workload.who.startswith("wo") }} {{ workload.who.endswith(["x", "ld"]) }} {{ "a-b".replace("-", "+") }}', 'true true a+b'],
    ['{{ ", ".join(workload.n) }} {{ "banana".find("an") }} {{ "banana".count("a") }} {{ "12".isdigit() }} {{ "ab".isalpha() }}', '3, 1, 2 1 3 true true'],
    ['{{ workload.n.index(1) }} {{ workload.n.count(3) }}', '1 1'],
    ['{{ workload.d.items() }} {{ workload.d.keys() }} {{ workload.d.values() }}', '[["b",2],["a",1]] ["b","a"] [2,1]'],
    ['{{ workload.d.get("a") }} {{ workload.d.get("z", "dflt") }} [{{ workload.d.get("z") }}]', '1 dflt []'],
    ['{{ steps.start.result.stdout.splitlines() | length }} lines', '2 lines'],
  ])('%s', (template, expected) => {
    expect(render(template)).toBe(expected);
  });
});

describe('native values', () => {
  it('a lone expression keeps its type; globals make plain data', () => {
    expect(render('{{ range(3) }}')).toEqual([0, 1, 2]);
    expect(render('{{ range(1, 10, 4) }}')).toEqual([1, 5, 9]);
    expect(render('{{ dict(a=1, b=[2]) }}')).toEqual({ a: 1, b: [2] });
    expect(render('{{ dict(workload.d, c=3) }}')).toEqual({ b: 2, a: 1, c: 3 });
    expect(render('{{ workload.users | selectattr("age", "lt", 18) | first }}')).toEqual({ name: 'bob', age: 17 });
    expect(render('{% macro m() %}x{% endmacro %}{{ m() }}')).toBe('x');
    expect(render('{{ 1 == 1 }}')).toBe(true);
    expect(render(' {{ workload.nothing }} ')).toBeNull();
  });
});

describe('limits', () => {
  it('a string over the size limit fails, whichever operation makes it, naming the field', () => {
    const limit = `a rendered string would exceed ${MAX_RENDERED_CHARS} characters`;
    expect(failure(`{{ "x" * ${MAX_RENDERED_CHARS + 1} }}`)).toBe(limit);
    expect(failure(`{{ "x" * ${MAX_RENDERED_CHARS} ~ "y" }}`)).toBe(limit);
    expect(failure(`{{ "x" * ${MAX_RENDERED_CHARS} + "y" }}`)).toBe(limit);
    expect(failure(`{% for i in range(2) %}{{ "x" * ${MAX_RENDERED_CHARS / 2 + 1} }}{% endfor %}`)).toBe(limit);
    expect(failure(`{{ "x" * ${MAX_RENDERED_CHARS / 2} }}{{ "x" * ${MAX_RENDERED_CHARS / 2} }}!`)).toBe(limit);
    expect(failure(`{{ ("x" * ${MAX_RENDERED_CHARS / 4}) | replace("x", "xxxxx") }}`)).toBe(limit);
    expect(failure(`{{ ["x" * ${MAX_RENDERED_CHARS / 2}, "y" * ${MAX_RENDERED_CHARS / 2}] | join(",") }}`)).toBe(limit);
    expect(failure(`{{ ("x" * ${MAX_RENDERED_CHARS / 2}) | indent(4, true) ~ ("x" * ${MAX_RENDERED_CHARS / 2}) }}`)).toBe(limit);
    expect(render(`{{ "x" * ${MAX_RENDERED_CHARS} }}`)).toHaveLength(MAX_RENDERED_CHARS);
  });

  it('a slice pays for what it copies', () => {
    // Each slice of a 100,000-item list copies it: 20 of them exceed the step budget, one does not.
    expect(failure('{% set xs = range(100000) %}{% for i in range(20) %}{% set ys = xs[::-1] %}{% endfor %}')).toBe(`rendering took more than ${MAX_RENDER_STEPS} steps (a loop too long?)`);
    expect(render('{{ range(100000)[::-1] | first }}')).toBe(99999);
  });

  it('range and list repetition are bounded', () => {
    expect(failure(`{{ range(${MAX_RANGE_ITEMS + 1}) }}`)).toBe(`range: more than ${MAX_RANGE_ITEMS} items`);
    expect(failure(`{{ [1, 2] * ${MAX_RANGE_ITEMS} }}`)).toBe(`a repeated list would exceed ${MAX_RANGE_ITEMS} items`);
    expect(render(`{{ range(${MAX_RANGE_ITEMS}) | length }}`)).toBe(MAX_RANGE_ITEMS);
  });

  it('a render that takes too many steps fails instead of running on', () => {
    const started = performance.now();
    expect(failure('{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}')).toBe(
      `rendering took more than ${MAX_RENDER_STEPS} steps (a loop too long?)`,
    );
    expect(failure('{% for i in range(100000) %}{% set x = range(100000) | sort %}{% endfor %}')).toMatch(/steps/);
    expect(performance.now() - started).toBeLessThan(10_000);
    // The budget is per render call: a big but finite loop is fine.
    expect(render('{% for i in range(20000) %}{% endfor %}ok')).toBe('ok');
  });

  it('macro recursion stops at a depth', () => {
    expect(failure('{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}')).toBe(`macro calls nested more than ${MAX_MACRO_DEPTH} deep`);
  });

  it('a template nested beyond what the parser handles is a template error', () => {
    expect(failure(`{{ ${'['.repeat(20000)}${']'.repeat(20000)} }}`)).toMatch(/nested too deeply|nests too deeply/);
  });
});
