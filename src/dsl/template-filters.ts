import { roundNumber } from './round-number.ts';
import { finite } from './template-operators.ts';
import { applyTest } from './template-tests.ts';
import { capitalizeText, replaceText, stripText, titleFilterText } from './template-text.ts';
import {
  compare,
  equal,
  iterate,
  limitText,
  MAX_RENDERED_CHARS,
  numeric,
  readAttribute,
  readPath,
  readPathStrict,
  RenderFault,
  scanCost,
  toText,
  truthy,
  typeName,
  type RenderBudget,
} from './template-values.ts';
import { isPlainObject } from '../objects.ts';

// The filters templates may use (`{{ x | upper }}`): Jinja's builtins that fit plain data, plus
// tojson/fromjson, base64 and `quote`. A Map, so no filter name reaches an inherited property;
// names are checked when a template is parsed. Messages never include a value: it may be a secret.

/** Arguments of a filter, function or method call as written: positional, then `name=value`. */
export type CallArgs = { positional: readonly unknown[]; keywords: ReadonlyMap<string, unknown> | undefined };

/**
 * A filter: `params` in order; with `variadic`, positional arguments go to `rest` and `params`
 * are named only (as in Jinja's `map(name, *args)` / `map(attribute=...)`).
 */
type Filter = { params: readonly string[]; run: (value: unknown, p: readonly unknown[], budget: RenderBudget, rest: readonly unknown[]) => unknown; variadic?: true };

/**
 * Matches `args` to `params` by position, then by name; what is not given is undefined. With
 * `variadic`, every positional argument is returned as the rest and `params` are named only.
 */
export function bindArgs(what: string, params: readonly string[], args: CallArgs, variadic = false): { values: unknown[]; rest: unknown[] } {
  const values = new Array<unknown>(params.length).fill(undefined);
  const fixed = variadic ? 0 : Math.min(args.positional.length, params.length);
  for (let i = 0; i < fixed; i++) values[i] = args.positional[i];
  const rest = args.positional.slice(fixed);
  if (rest.length > 0 && !variadic) throw new RenderFault(`${what} takes at most ${params.length} argument${params.length === 1 ? '' : 's'}`);
  for (const [name, value] of args.keywords ?? []) {
    const index = params.indexOf(name);
    if (index < 0) throw new RenderFault(`${what} has no argument '${name}'`);
    if (index < fixed) throw new RenderFault(`${what} got argument '${name}' twice`);
    values[index] = value;
  }
  return { values, rest };
}

const text = (value: unknown): string => toText(value);
const optionalText = (value: unknown, fallback: string): string => (value === undefined ? fallback : text(value));
const count = (value: unknown, fallback: number, what: string): number => {
  if (value === undefined) return fallback;
  const n = numeric(value) ?? (typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN);
  if (!Number.isFinite(n)) throw new RenderFault(`${what} must be a number`);
  return Math.trunc(n);
};

function length(value: unknown): number {
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  if (isPlainObject(value)) return Object.keys(value).length;
  if (value === undefined || value === null) return 0;
  throw new RenderFault(`length: ${typeName(value)} has no length`);
}

/** JSON text of a value (`undefined` reads as `null`); `indent` pretty-prints. */
function tojson(value: unknown, indent: unknown): string {
  return limitText(JSON.stringify(value, null, indent === undefined ? undefined : count(indent, 0, 'tojson indent')) ?? 'null');
}

/** Parses JSON text into a native value. */
function fromjson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    throw new RenderFault('fromjson: the value is not valid JSON');
  }
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  const number = trimmed === '' ? Number.NaN : Number(trimmed);
  return Number.isFinite(number) ? number : undefined;
}

/** Jinja's int: booleans → 0/1, numbers truncated, numeric text parsed (in `base`), anything else → `fallback`. */
function int(value: unknown, fallback: unknown, base: unknown): unknown {
  const radix = count(base, 10, 'int base');
  if (radix !== 10 && typeof value === 'string') {
    const digits = value.trim().toLowerCase().replace(/^0[xob]/, '');
    const parsed = /^[0-9a-z]+$/.test(digits) ? Number.parseInt(digits, radix) : Number.NaN;
    return Number.isNaN(parsed) ? orGiven(fallback, 0) : parsed;
  }
  const number = toNumber(value);
  return number === undefined ? orGiven(fallback, 0) : Math.trunc(number);
}

/** A filter argument, else `absent` when none was given: an explicit `none` is a value (Jinja's `default(none)` is None), not a missing argument. */
function orGiven(given: unknown, absent: unknown): unknown {
  return given === undefined ? absent : given;
}

/** POSIX shell single-quoting: the value as one word whatever it holds (`it's` → `'it'\''s'`). */
function quote(value: unknown): string {
  const raw = text(value);
  if (raw.includes('\0')) throw new RenderFault('quote: a shell word cannot hold a NUL character');
  return limitText(`'${raw.replaceAll("'", `'\\''`)}'`);
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };
const escape = (value: unknown): string => limitText(text(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]));

function truncate(value: string, length: number, killwords: unknown, end: string, leeway: number): string {
  // Jinja's checks, before the text is looked at: a shorter length gave an `end` longer than asked.
  if (length < end.length) throw new RenderFault(`truncate: length must be at least the length of end (${end.length})`);
  if (leeway < 0) throw new RenderFault('truncate: leeway must be >= 0');
  if (value.length <= length + leeway) return value;
  if (truthy(killwords)) return value.slice(0, Math.max(0, length - end.length)) + end;
  const cut = value.slice(0, Math.max(0, length - end.length));
  const space = cut.lastIndexOf(' ');
  return (space > 0 ? cut.slice(0, space) : cut) + end;
}

function indent(value: string, width: unknown, first: unknown, blank: unknown): string {
  const pad = typeof width === 'string' ? width : ' '.repeat(count(width, 4, 'indent width'));
  const lines = value.split('\n');
  const out = lines.map((line, i) => {
    if (i === 0 && !truthy(first)) return line;
    return line.trim() === '' && !truthy(blank) ? line : pad + line;
  });
  return limitText(out.join('\n'));
}

function entries(value: unknown, what: string): [string, unknown][] {
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value)) throw new RenderFault(`${what}: ${typeName(value)} is not a mapping`);
  return Object.entries(value);
}

const byKey = (caseSensitive: unknown, attribute: unknown, what: string) => (item: unknown): unknown => {
  const value = attribute === undefined || attribute === null ? item : readPathStrict(item, attribute, what);
  return !truthy(caseSensitive) && typeof value === 'string' ? value.toLowerCase() : value;
};

function sorted(items: readonly unknown[], key: (item: unknown) => unknown, reverse: unknown, budget: RenderBudget): unknown[] {
  budget.spend(items.length * Math.ceil(Math.log2(items.length + 1)));
  const keyed = items.map((item) => ({ item, key: key(item) }));
  keyed.sort((a, b) => compare(a.key, b.key));
  const out = keyed.map((k) => k.item);
  return truthy(reverse) ? out.reverse() : out;
}

/** A key equal scalars share (`equal`: a boolean is its number, as in Python); none for a list or mapping. */
function scalarKey(value: unknown): string | undefined {
  const n = numeric(value);
  if (n !== undefined) return `n${n}`;
  if (typeof value === 'string') return `s${value}`;
  return value === null || value === undefined ? String(value) : undefined;
}

// Scalars are looked up, not compared with every one kept: one pass, as Jinja's set does; lists
// and mappings are compared with those kept before, each comparison paid from the budget.
function unique(items: readonly unknown[], key: (item: unknown) => unknown, budget: RenderBudget): unknown[] {
  const seenScalars = new Set<string>();
  const seenCollections: unknown[] = [];
  const out: unknown[] = [];
  for (const item of items) {
    const k = key(item);
    const scalar = scalarKey(k);
    if (scalar !== undefined) {
      if (seenScalars.has(scalar)) continue;
      seenScalars.add(scalar);
    } else {
      budget.spend(scanCost(seenCollections.length));
      if (seenCollections.some((s) => equal(s, k, budget))) continue;
      seenCollections.push(k);
    }
    out.push(item);
  }
  return out;
}

function extreme(items: readonly unknown[], key: (item: unknown) => unknown, sign: 1 | -1): unknown {
  let best: { item: unknown; key: unknown } | undefined;
  for (const item of items) {
    const k = key(item);
    if (best === undefined || compare(k, best.key) * sign > 0) best = { item, key: k };
  }
  return best?.item;
}

function sum(items: readonly unknown[], attribute: unknown, start: unknown): number {
  let total = start === undefined ? 0 : (numeric(start) ?? fault('sum: start must be a number'));
  for (const item of items) {
    const n = numeric(attribute === undefined || attribute === null ? item : readPathStrict(item, attribute, 'sum'));
    if (n === undefined) throw new RenderFault('sum: every item must be a number');
    total += n;
  }
  return finite('sum', total);
}

function chunks(items: readonly unknown[], size: number, fill: unknown, budget: RenderBudget): unknown[][] {
  if (size < 1) throw new RenderFault('batch size must be at least 1');
  const out: unknown[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  const last = out.at(-1);
  // The padding is items made, as many as the size asks (a payload may give it): paid before they are.
  if (last && fill !== undefined && last.length < size) {
    budget.spend(size - last.length);
    while (last.length < size) last.push(fill);
  }
  return out;
}

function slices(items: readonly unknown[], n: number, fill: unknown, budget: RenderBudget): unknown[][] {
  if (n < 1) throw new RenderFault('slice count must be at least 1');
  // It makes n lists, however few the items: paid before they are made (a payload may give n).
  budget.spend(n);
  const perSlice = Math.floor(items.length / n);
  const withExtra = items.length % n;
  const out: unknown[][] = [];
  let offset = 0;
  for (let i = 0; i < n; i++) {
    const size = perSlice + (i < withExtra ? 1 : 0);
    const slice = items.slice(offset, offset + size);
    offset += size;
    if (fill !== undefined && i >= withExtra && withExtra > 0) slice.push(fill);
    out.push(slice);
  }
  return out;
}

function urlencode(value: unknown): string {
  const encode = (v: unknown) => encodeURIComponent(text(v)).replaceAll('%2F', '/');
  if (isPlainObject(value)) return limitText(Object.entries(value).map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&'));
  if (Array.isArray(value)) {
    return limitText(
      value
        .map((pair) => {
          if (!Array.isArray(pair) || pair.length !== 2) throw new RenderFault('urlencode: a list must hold [key, value] pairs');
          return `${encode(pair[0])}=${encode(pair[1])}`;
        })
        .join('&'),
    );
  }
  return limitText(encode(value));
}

/**
 * Tests that ask whether a value is there or what kind it is: `selectattr`/`rejectattr` give them
 * an attribute that is not there as undefined; any other test, or none, reads it strictly.
 */
const TESTS_OF_ABSENCE: ReadonlySet<string> = new Set(['defined', 'undefined', 'none', 'boolean', 'true', 'false', 'number', 'integer', 'float', 'string', 'mapping', 'iterable', 'sequence', 'callable', 'sameas']);

/** `selectattr`/`rejectattr`'s read of `attribute` in an item, for `test`. */
const attributeFor = (attribute: unknown, test: unknown, what: string) => (item: unknown): unknown =>
  typeof test === 'string' && TESTS_OF_ABSENCE.has(test) ? readPath(item, attribute) : readPathStrict(item, attribute, what);

function selectBy(items: readonly unknown[], keep: boolean, pick: (item: unknown) => unknown, test: unknown, args: readonly unknown[], budget: RenderBudget): unknown[] {
  const check = (item: unknown): boolean => {
    const value = pick(item);
    if (test === undefined) return truthy(value);
    if (typeof test !== 'string') throw new RenderFault('a test name must be a string');
    return applyTest(test, value, args, budget);
  };
  return items.filter((item) => check(item) === keep);
}

function joinTexts(items: readonly unknown[], separator: string): string {
  let out = '';
  for (let i = 0; i < items.length; i++) {
    out += (i > 0 ? separator : '') + text(items[i]);
    limitText(out);
  }
  return out;
}

const list = (value: unknown, what: string): readonly unknown[] => iterate(value, what);

const filters: [string, Filter][] = [
  ['abs', { params: [], run: (v) => Math.abs(numeric(v) ?? fault('abs needs a number')) }],
  ['attr', { params: ['name'], run: (v, [name]) => readAttribute(v, name) }],
  ['batch', { params: ['linecount', 'fill_with'], run: (v, [size, fill], budget) => chunks(list(v, 'batch'), count(size, 1, 'batch size'), fill, budget) }],
  ['capitalize', { params: [], run: (v) => capitalizeText(text(v)) }],
  [
    'center',
    {
      params: ['width'],
      run: (v, [width]) => {
        const s = text(v);
        const w = Math.min(count(width, 80, 'center width'), MAX_RENDERED_CHARS + 1);
        const left = Math.max(0, Math.floor((w - s.length) / 2));
        return limitText(' '.repeat(left) + s + ' '.repeat(Math.max(0, w - s.length - left)));
      },
    },
  ],
  ['count', { params: [], run: (v) => length(v) }],
  ['length', { params: [], run: (v) => length(v) }],
  ['default', { params: ['default_value', 'boolean'], run: (v, [fallback, boolean]) => ((truthy(boolean) ? !truthy(v) : v === undefined) ? orGiven(fallback, '') : v) }],
  [
    'dictsort',
    {
      params: ['case_sensitive', 'by', 'reverse'],
      run: (v, [cs, by, reverse], budget) => {
        // As Jinja: a misspelt `by` ("Value") sorted by key without a word.
        if (by !== undefined && by !== 'key' && by !== 'value') throw new RenderFault("dictsort: by must be 'key' or 'value'");
        return sorted(entries(v, 'dictsort'), (pair) => byKey(cs, undefined, 'dictsort')(readAttribute(pair, by === 'value' ? 1 : 0)), reverse, budget);
      },
    },
  ],
  ['dump', { params: ['indent'], run: (v, [spaces]) => tojson(v, spaces) }],
  ['escape', { params: [], run: escape }],
  ['forceescape', { params: [], run: escape }],
  ['first', { params: [], run: (v) => list(v, 'first')[0] }],
  ['float', { params: ['default'], run: (v, [fallback]) => toNumber(v) ?? orGiven(fallback, 0) }],
  ['fromjson', { params: [], run: fromjson }],
  ['indent', { params: ['width', 'first', 'blank'], run: (v, [width, first, blank]) => indent(text(v), width, first, blank) }],
  ['int', { params: ['default', 'base'], run: (v, [fallback, base]) => int(v, fallback, base) }],
  ['items', { params: [], run: (v) => entries(v, 'items') }],
  [
    'join',
    {
      params: ['d', 'attribute'],
      run: (v, [separator, attribute]) => joinTexts(attribute === undefined ? list(v, 'join') : list(v, 'join').map((item) => readPathStrict(item, attribute, 'join')), optionalText(separator, '')),
    },
  ],
  ['keys', { params: [], run: (v) => entries(v, 'keys').map(([k]) => k) }],
  ['last', { params: [], run: (v) => list(v, 'last').at(-1) }],
  ['list', { params: [], run: (v) => [...list(v, 'list')] }],
  ['lower', { params: [], run: (v) => text(v).toLowerCase() }],
  [
    'map',
    {
      params: ['attribute', 'default'],
      variadic: true,
      run: (v, [attribute, fallback], budget, rest) => {
        const items = list(v, 'map');
        // Jinja's `default=` is what an item without the attribute gives; without it, such an item is an error.
        if (attribute !== undefined) return items.map((item) => (fallback === undefined ? readPathStrict(item, attribute, 'map') : (readPath(item, attribute) ?? fallback)));
        const [name, ...args] = rest;
        if (typeof name !== 'string') throw new RenderFault('map needs a filter name or attribute=');
        return items.map((item) => applyFilter(name, item, { positional: args, keywords: undefined }, budget));
      },
    },
  ],
  ['max', { params: ['case_sensitive', 'attribute'], run: (v, [cs, attribute]) => extreme(list(v, 'max'), byKey(cs, attribute, 'max'), 1) }],
  ['min', { params: ['case_sensitive', 'attribute'], run: (v, [cs, attribute]) => extreme(list(v, 'min'), byKey(cs, attribute, 'min'), -1) }],
  ['quote', { params: [], run: quote }],
  ['reject', { params: [], variadic: true, run: (v, _p, budget, [test, ...args]) => selectBy(list(v, 'reject'), false, (item) => item, test, args, budget) }],
  ['rejectattr', { params: [], variadic: true, run: (v, _p, budget, [attr, test, ...args]) => selectBy(list(v, 'rejectattr'), false, attributeFor(attr, test, 'rejectattr'), test, args, budget) }],
  ['select', { params: [], variadic: true, run: (v, _p, budget, [test, ...args]) => selectBy(list(v, 'select'), true, (item) => item, test, args, budget) }],
  ['selectattr', { params: [], variadic: true, run: (v, _p, budget, [attr, test, ...args]) => selectBy(list(v, 'selectattr'), true, attributeFor(attr, test, 'selectattr'), test, args, budget) }],
  [
    'replace',
    {
      params: ['old', 'new', 'count'],
      run: (v, [old, replacement, limit]) => replaceText(text(v), text(old), text(replacement), limit === undefined || limit === null ? undefined : count(limit, -1, 'replace count')),
    },
  ],
  ['reverse', { params: [], run: (v) => (typeof v === 'string' ? Array.from(v).reverse().join('') : [...list(v, 'reverse')].reverse()) }],
  [
    'round',
    {
      params: ['precision', 'method'],
      run: (v, [precision, method]) => {
        const n = numeric(v) ?? fault('round needs a number');
        return roundNumber(n, count(precision, 0, 'round precision'), method ?? 'common');
      },
    },
  ],
  ['safe', { params: [], run: (v) => v }],
  ['slice', { params: ['slices', 'fill_with'], run: (v, [n, fill], budget) => slices(list(v, 'slice'), count(n, 1, 'slice count'), fill, budget) }],
  ['sort', { params: ['reverse', 'case_sensitive', 'attribute'], run: (v, [reverse, cs, attribute], budget) => sorted(list(v, 'sort'), byKey(cs, attribute, 'sort'), reverse, budget) }],
  ['string', { params: [], run: (v) => text(v) }],
  ['sum', { params: ['attribute', 'start'], run: (v, [attribute, start]) => sum(list(v, 'sum'), attribute, start) }],
  ['title', { params: [], run: (v) => titleFilterText(text(v)) }],
  ['tojson', { params: ['indent'], run: (v, [spaces]) => tojson(v, spaces) }],
  ['trim', { params: ['chars'], run: (v, [chars]) => stripText(text(v), chars, 'both') }],
  [
    'truncate',
    {
      params: ['length', 'killwords', 'end', 'leeway'],
      run: (v, [max, killwords, end, leeway]) => truncate(text(v), count(max, 255, 'truncate length'), killwords, optionalText(end, '...'), count(leeway, 5, 'truncate leeway')),
    },
  ],
  ['unique', { params: ['case_sensitive', 'attribute'], run: (v, [cs, attribute], budget) => unique(list(v, 'unique'), byKey(cs, attribute, 'unique'), budget) }],
  ['upper', { params: [], run: (v) => text(v).toUpperCase() }],
  ['urlencode', { params: [], run: urlencode }],
  ['values', { params: [], run: (v) => entries(v, 'values').map(([, value]) => value) }],
  ['wordcount', { params: [], run: (v) => text(v).match(/[\p{L}\p{N}_]+/gu)?.length ?? 0 }],
  ['b64encode', { params: [], run: (v) => limitText(base64Encode(text(v))) }],
  ['b64decode', { params: [], run: (v) => base64Decode(text(v)) }],
];

// Base64 without Node's Buffer, so the interpreter also runs in the browser (the GUI's simulation).
/** UTF-8 bytes of `s` in standard base64. */
function base64Encode(s: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(s)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Base64 (standard or URL-safe) decoded as UTF-8, as leniently as Buffer: other characters skipped, stops at '='. */
function base64Decode(s: string): string {
  let b64 = s.split('=')[0].replace(/[^A-Za-z0-9+/_-]/g, '').replace(/-/g, '+').replace(/_/g, '/');
  if (b64.length % 4 === 1) b64 = b64.slice(0, -1);
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

const ALIASES: [string, string][] = [
  ['d', 'default'],
  ['e', 'escape'],
];

function fault(message: string): never {
  throw new RenderFault(message);
}

const table = new Map<string, Filter>(filters);
for (const [alias, name] of ALIASES) {
  const filter = table.get(name);
  if (filter) table.set(alias, filter);
}

/** The names of every filter, for the check at parse time. */
export const filterNames: ReadonlySet<string> = new Set(table.keys());

/** Applies the filter `name` to `value`; throws RenderFault for an unknown filter or bad arguments. */
export function applyFilter(name: string, value: unknown, args: CallArgs, budget: RenderBudget): unknown {
  const filter = table.get(name);
  if (!filter) throw new RenderFault(`unknown filter '${name}'`);
  budget.spend(1 + (Array.isArray(value) ? value.length : typeof value === 'string' ? value.length >> 6 : 0));
  const { values, rest } = bindArgs(`filter '${name}'`, filter.params, args, filter.variadic);
  return filter.run(value, values, budget, rest);
}
