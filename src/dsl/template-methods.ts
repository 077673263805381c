import { bindArgs, type CallArgs } from './template-filters.ts';
import { capitalizeText, replaceText, stripText, titleText } from './template-text.ts';
import { equal, iterate, limitText, numeric, RenderFault, scanCost, toText, typeName, type RenderBudget } from './template-values.ts';
import { isPlainObject } from '../objects.ts';

// The methods templates may call on values (`s.upper()`, `d.items()`), the Python ones playbook
// authors expect from Jinja. Each is a function of ours chosen by the receiver's type and the
// name: a call never reads a property of the value, so no JavaScript method is reachable.

type Method<T> = { params: readonly string[]; run: (self: T, p: readonly unknown[], budget: RenderBudget) => unknown };

const str = (value: unknown, what: string): string => {
  if (typeof value !== 'string') throw new RenderFault(`${what} needs a string argument, not ${typeName(value)}`);
  return value;
};
const optionalCount = (value: unknown): number => (value === undefined || value === null ? -1 : (numeric(value) ?? -1));

/** Python's str.split: on runs of whitespace without `sep`, at most `maxsplit` splits. */
function split(self: string, sep: unknown, maxsplit: unknown): string[] {
  const limit = optionalCount(maxsplit);
  if (sep === undefined || sep === null) {
    const words: string[] = [];
    let rest = self.trimStart();
    while (rest !== '') {
      if (limit >= 0 && words.length === limit) {
        words.push(rest.trimEnd());
        break;
      }
      const match = /\s+/.exec(rest);
      if (!match) {
        words.push(rest);
        break;
      }
      words.push(rest.slice(0, match.index));
      rest = rest.slice(match.index + match[0].length);
    }
    return words;
  }
  const separator = str(sep, 'split');
  if (separator === '') throw new RenderFault('split: empty separator');
  const parts = self.split(separator);
  return limit < 0 || parts.length <= limit + 1 ? parts : [...parts.slice(0, limit), parts.slice(limit).join(separator)];
}

const affix = (self: string, arg: unknown, test: (s: string, a: string) => boolean, what: string): boolean =>
  Array.isArray(arg) ? arg.some((a) => test(self, str(a, what))) : test(self, str(arg, what));

const stringMethods = new Map<string, Method<string>>([
  ['upper', { params: [], run: (s) => s.toUpperCase() }],
  ['lower', { params: [], run: (s) => s.toLowerCase() }],
  ['strip', { params: ['chars'], run: (s, [chars]) => stripText(s, chars, 'both') }],
  ['lstrip', { params: ['chars'], run: (s, [chars]) => stripText(s, chars, 'left') }],
  ['rstrip', { params: ['chars'], run: (s, [chars]) => stripText(s, chars, 'right') }],
  ['split', { params: ['sep', 'maxsplit'], run: (s, [sep, maxsplit], budget) => (budget.spend(s.length >> 4), split(s, sep, maxsplit)) }],
  ['splitlines', { params: [], run: (s) => s.split(/\r\n|\r|\n/).filter((line, i, all) => i < all.length - 1 || line !== '') }],
  ['startswith', { params: ['prefix'], run: (s, [prefix]) => affix(s, prefix, (a, b) => a.startsWith(b), 'startswith') }],
  ['endswith', { params: ['suffix'], run: (s, [suffix]) => affix(s, suffix, (a, b) => a.endsWith(b), 'endswith') }],
  [
    'replace',
    {
      params: ['old', 'new', 'count'],
      run: (s, [old, replacement, limit]) => replaceText(s, str(old, 'replace'), str(replacement, 'replace'), optionalCount(limit) < 0 ? undefined : optionalCount(limit)),
    },
  ],
  [
    'join',
    {
      params: ['iterable'],
      run: (s, [items]) => {
        let out = '';
        iterate(items, 'join').forEach((item, i) => {
          out = limitText(out + (i > 0 ? s : '') + toText(item));
        });
        return out;
      },
    },
  ],
  ['title', { params: [], run: titleText }],
  ['capitalize', { params: [], run: capitalizeText }],
  ['find', { params: ['sub'], run: (s, [sub]) => s.indexOf(str(sub, 'find')) }],
  ['count', { params: ['sub'], run: (s, [sub]) => (str(sub, 'count') === '' ? s.length + 1 : s.split(str(sub, 'count')).length - 1) }],
  ['isdigit', { params: [], run: (s) => /^\p{Nd}+$/u.test(s) }],
  ['isalpha', { params: [], run: (s) => /^\p{L}+$/u.test(s) }],
  ['isalnum', { params: [], run: (s) => /^[\p{L}\p{Nd}]+$/u.test(s) }],
  ['islower', { params: [], run: (s) => /\p{Ll}/u.test(s) && s === s.toLowerCase() }],
  ['isupper', { params: [], run: (s) => /\p{Lu}/u.test(s) && s === s.toUpperCase() }],
]);

const listMethods = new Map<string, Method<readonly unknown[]>>([
  [
    'index',
    {
      params: ['value'],
      run: (l, [value], budget) => {
        budget.spend(scanCost(l.length));
        const i = l.findIndex((item) => equal(item, value, budget));
        if (i < 0) throw new RenderFault('index: the value is not in the list');
        return i;
      },
    },
  ],
  ['count', { params: ['value'], run: (l, [value], budget) => (budget.spend(scanCost(l.length)), l.filter((item) => equal(item, value, budget)).length) }],
]);

const mappingMethods = new Map<string, Method<Record<string, unknown>>>([
  ['items', { params: [], run: (d) => Object.entries(d) }],
  ['keys', { params: [], run: (d) => Object.keys(d) }],
  ['values', { params: [], run: (d) => Object.values(d) }],
  ['get', { params: ['key', 'default'], run: (d, [key, fallback]) => (typeof key === 'string' && Object.hasOwn(d, key) ? d[key] : (fallback ?? null)) }],
]);

type Found = { value: unknown } | undefined;

function run<T>(methods: ReadonlyMap<string, Method<T>>, self: T, name: string, args: CallArgs, budget: RenderBudget): Found {
  const method = methods.get(name);
  if (!method) return undefined;
  const { values } = bindArgs(`method '${name}'`, method.params, args);
  return { value: method.run(self, values, budget) };
}

/** Calls the method `name` of `self`; throws RenderFault when its type has no such method. */
export function callMethod(self: unknown, name: string, args: CallArgs, budget: RenderBudget): unknown {
  let result: Found;
  if (typeof self === 'string') result = run(stringMethods, self, name, args, budget);
  else if (Array.isArray(self)) result = run(listMethods, self, name, args, budget);
  else if (isPlainObject(self)) result = run(mappingMethods, self, name, args, budget);
  if (result === undefined) throw new RenderFault(`${typeName(self)} has no method '${name}'`);
  return result.value;
}
