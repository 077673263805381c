import type * as v from 'valibot';
import { isObject } from '../objects.ts';
import { plainRecordOf } from '../own-keys-record.ts';

/** A field no schema declares, with where it is and what to say about it. */
export type UnknownField = { path: v.IssuePathItem[]; message: string };

/**
 * Every field no schema declares in the mapping where `path` (an unknown-key issue's path, whose
 * last item is the key valibot reported) found one: valibot stops at the first unknown key of a
 * mapping, an author wants them all at once. Each message says `unknown field 'comand' (did you
 * mean 'command'?)` when a known field of the same mapping is close. `schema` is the document's
 * root schema.
 */
export function unknownFields(schema: v.GenericSchema, path: readonly v.IssuePathItem[]): UnknownField[] {
  const last = path.at(-1);
  if (last === undefined) return [];
  const known = knownFields(schema, path.slice(0, -1), last.input);
  const parent = isObject(last.input) ? last.input : {};
  // The reported key first; then the mapping's other keys no schema declares, in their order.
  const others = known.length > 0 ? Object.keys(parent).filter((k) => k !== last.key && !known.includes(k)) : [];
  return [String(last.key), ...others].map((name) => {
    const close = closest(name, known);
    const message = close ? `unknown field '${name}' (did you mean '${close}'?)` : `unknown field '${name}'${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`;
    const item: v.ObjectPathItem = { type: 'object', origin: 'key', input: parent, key: name, value: parent[name] };
    return { path: [...path.slice(0, -1), item], message };
  });
}

/** The fields the object schema reached by following `path` from `schema` declares. */
function knownFields(schema: unknown, path: readonly v.IssuePathItem[], parent: unknown): string[] {
  let current = schema;
  let input: unknown = path.length > 0 ? undefined : parent;
  for (const item of path) {
    current = resolve(current, item.input);
    if (!isObject(current)) return [];
    if (isObject(current.entries) && typeof item.key === 'string') current = current.entries[item.key];
    else if ('item' in current) current = current.item;
    // A record (`inputs:`): every key's value has the one schema.
    else if (current.type === 'record' && 'value' in current) current = current.value;
    else return [];
    input = item.value;
  }
  current = resolve(current, input ?? parent);
  return isObject(current) && isObject(current.entries) ? Object.keys(current.entries) : [];
}

// optional/nullable wrap a schema; lazy picks one by the input; variant by the input's discriminator.
function resolve(schema: unknown, input: unknown): unknown {
  let current = schema;
  for (let depth = 0; depth < 16 && isObject(current); depth++) {
    const record = ownKeysRecordOf(current);
    if (record) current = record;
    else if ('wrapped' in current) current = current.wrapped;
    // A pipe that opens with a check (`inputs:`' reserved names) is read as the schema after it.
    else if (current.type === 'custom' && Array.isArray(current.pipe)) current = current.pipe.find((item: unknown) => isObject(item) && item.kind === 'schema' && (item.type !== 'custom' || ownKeysRecordOf(item) !== undefined));
    else if (current.type === 'lazy' && typeof current.getter === 'function') current = current.getter(input);
    else if (current.type === 'variant' && Array.isArray(current.options) && typeof current.key === 'string' && isObject(input)) {
      const key = current.key;
      current = current.options.find((option: unknown) => isObject(option) && isObject(option.entries) && isObject(option.entries[key]) && option.entries[key].literal === input[key]);
    } else break;
  }
  return current;
}

/** ` (did you mean 'x'?)` when a known name `x` is close to `name` (closest), else nothing. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const close = closest(name, [...known]);
  return close ? ` (did you mean '${close}'?)` : '';
}

/** The known name nearest `name` by edit distance, when near enough to be a typo of it. */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(1, Math.min(3, Math.floor(name.length / 3))) ? best : undefined;
}

// Levenshtein with a swap of neighbours (`mehtod`) counted as one edit.
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The v.record an ownKeysRecord (a pipe opening with its object check) stands for; undefined for any other schema. */
function ownKeysRecordOf(schema: Record<string, unknown>): unknown {
  const first = Array.isArray(schema.pipe) ? schema.pipe[0] : undefined;
  return isObject(first) ? plainRecordOf(first) : undefined;
}
