import { isPlainObject } from '../objects.ts';
// The values templates compute with, and the rules every part of the interpreter shares: which
// attributes are readable (own data only), how values read as text, truth and order. Templates
// see plain data only (DESIGN.md "Playbook DSL v1"): nothing here reads an inherited property or
// calls a value.

/** Most characters any string a template makes may have (the rendered text and every piece of it). */
export const MAX_RENDERED_CHARS = 1024 * 1024;
/** Most items `range()` or list repetition may make. */
export const MAX_RANGE_ITEMS = 100_000;
/** Work units (one per node evaluated, more for bulk operations) one render may spend. */
export const MAX_RENDER_STEPS = 1_000_000;

/** A template failed while it was evaluated; the message never holds a value (it may be a secret). */
export class RenderFault extends Error {
  override readonly name = 'RenderFault';
}

/** The work left to a render; every evaluation step and bulk operation pays from it. */
export class RenderBudget {
  private remaining = MAX_RENDER_STEPS;
  /** Pays `units`; throws RenderFault when the render has spent its budget. */
  spend(units: number): void {
    this.remaining -= units;
    if (this.remaining < 0) throw new RenderFault(`rendering took more than ${MAX_RENDER_STEPS} steps (a loop too long?)`);
  }
}

/** Names that reach JavaScript's object machinery; no template reads them, whatever the syntax. */
const FORBIDDEN_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__']);

/** Whether a template may read `name` (as a name or an attribute). */
export const isAccessibleName = (name: string): boolean => !FORBIDDEN_NAMES.has(name);

/** Throws when `name` may not be read or written as an attribute. */
export function assertAccessible(name: string): void {
  if (FORBIDDEN_NAMES.has(name)) throw new RenderFault(`'${name}' is not accessible in templates`);
}

/** Sets an own data property, also for the key `__proto__` (which assignment would treat as the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Builds a mapping from pairs, keeping `__proto__` and friends as ordinary own keys. */
export function mappingOf(pairs: Iterable<readonly [string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of pairs) setOwn(out, key, value);
  return out;
}

/**
 * `obj.key` / `obj[key]` over plain data: own properties of mappings, list and string indices
 * (negative from the end, as in Jinja) and their `length`. Anything else is undefined.
 */
export function readAttribute(obj: unknown, key: unknown): unknown {
  if (typeof key === 'string') assertAccessible(key);
  else if (typeof key !== 'number') throw new RenderFault(`an attribute name must be a string or a number, not ${typeName(key)}`);
  if (Array.isArray(obj) || typeof obj === 'string') {
    if (key === 'length') return obj.length;
    if (typeof key !== 'number' || !Number.isInteger(key)) return undefined;
    const index = key < 0 ? obj.length + key : key;
    return index >= 0 && index < obj.length ? obj[index] : undefined;
  }
  if (isPlainObject(obj)) {
    const name = String(key);
    return Object.hasOwn(obj, name) ? obj[name] : undefined;
  }
  return undefined;
}

/** Whether readAttribute finds `key` in `obj` (rather than answering undefined for its absence). */
export function hasAttribute(obj: unknown, key: unknown): boolean {
  if (Array.isArray(obj) || typeof obj === 'string') {
    if (key === 'length') return true;
    if (typeof key !== 'number' || !Number.isInteger(key)) return false;
    return (key < 0 ? obj.length + key : key) >= 0 && (key < 0 ? obj.length + key : key) < obj.length;
  }
  return isPlainObject(obj) && (typeof key === 'string' || typeof key === 'number') && Object.hasOwn(obj, String(key));
}

/** A dotted path (`a.b.0`), as the `attribute=` argument of filters takes it. */
export function readPath(obj: unknown, path: unknown): unknown {
  if (typeof path === 'number') return readAttribute(obj, path);
  if (typeof path !== 'string') throw new RenderFault('attribute must be a string');
  let value = obj;
  for (const part of path.split('.')) {
    if (value === undefined || value === null) return undefined;
    value = readAttribute(value, /^-?\d+$/.test(part) ? Number(part) : part);
  }
  return value;
}

/**
 * As readPath, but an attribute along the path that is not there is an error naming it and the
 * filter reading it (`what`), as Jinja's StrictUndefined fails on it (templates are strict).
 */
export function readPathStrict(obj: unknown, path: unknown, what: string): unknown {
  if (typeof path !== 'number' && typeof path !== 'string') throw new RenderFault('attribute must be a string');
  let value = obj;
  for (const part of typeof path === 'number' ? [path] : path.split('.')) {
    const key = typeof part === 'string' && /^-?\d+$/.test(part) ? Number(part) : part;
    const next = readAttribute(value, key);
    if (next === undefined && !hasAttribute(value, key)) {
      throw new RenderFault(`${what}(attribute=${JSON.stringify(path)}): ${value === null ? 'none' : `a ${typeName(value)}`} has no ${typeof key === 'number' ? 'item' : 'attribute'} '${part}'`);
    }
    value = next;
  }
  return value;
}

/** The type of a value in messages (never the value itself). */
export function typeName(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'none';
  if (Array.isArray(value)) return 'list';
  if (isPlainObject(value)) return 'mapping';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** How a value reads in text: '' for none/undefined, JSON for lists and mappings. */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return limitText(JSON.stringify(value) ?? '');
}

/** Returns `text`, or throws when it is longer than any string a template may make. */
export function limitText(text: string): string {
  if (text.length > MAX_RENDERED_CHARS) throw new RenderFault(`a rendered string would exceed ${MAX_RENDERED_CHARS} characters`);
  return text;
}

/** Jinja truthiness inside templates: none, undefined, false, 0, '' and empty lists and mappings are false. */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) {
    for (const key in value) if (Object.hasOwn(value, key)) return true;
    return false;
  }
  return true;
}

/** A number, or a boolean as 0/1 (as Python does in arithmetic); otherwise undefined. */
export function numeric(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return undefined;
}

/**
 * What scanning `n` items for equal ones costs: a comparison of two scalars takes about a
 * twentieth of an evaluation step, so a search pays a step per 16 items it may compare.
 */
export const scanCost = (n: number): number => n >> 4;

/**
 * Equality by value: lists and mappings compare their contents, paid from `budget` (two long
 * lists compared in a loop are work as a loop over them is; each nested one is a step).
 */
export function equal(a: unknown, b: unknown, budget: RenderBudget): boolean {
  if (a === b) return true;
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return na === nb;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    budget.spend(1 + scanCost(a.length));
    return a.every((item, i) => equal(item, b[i], budget));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    budget.spend(1 + scanCost(keys.length));
    return keys.every((key) => Object.hasOwn(b, key) && equal(a[key], b[key], budget));
  }
  return false;
}

/** Order of two values of one kind (numbers, strings, lists); -1, 0 or 1. Other pairs throw. */
export function compare(a: unknown, b: unknown): number {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const order = compare(a[i], b[i]);
      if (order !== 0) return order;
    }
    return a.length - b.length < 0 ? -1 : a.length > b.length ? 1 : 0;
  }
  throw new RenderFault(`cannot compare ${typeName(a)} with ${typeName(b)}`);
}

/** The items a `for` or a filter iterates: a list's items, a string's characters, a mapping's keys. */
export function iterate(value: unknown, what: string): readonly unknown[] {
  if (Array.isArray(value)) return value;
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return Array.from(value);
  if (isPlainObject(value)) return Object.keys(value);
  throw new RenderFault(`${what}: ${typeName(value)} is not iterable`);
}

/** `needle in haystack`: a substring, a list item, or a mapping key; a search paid by the haystack's size. */
export function contains(haystack: unknown, needle: unknown, budget: RenderBudget): boolean {
  if (haystack === undefined || haystack === null) return false;
  if (typeof haystack === 'string') {
    if (typeof needle !== 'string') throw new RenderFault(`'in <string>' needs a string on the left, not ${typeName(needle)}`);
    budget.spend(haystack.length >> 6);
    return haystack.includes(needle);
  }
  if (Array.isArray(haystack)) {
    budget.spend(scanCost(haystack.length));
    return haystack.some((item) => equal(item, needle, budget));
  }
  if (isPlainObject(haystack)) return (typeof needle === 'string' || typeof needle === 'number') && Object.hasOwn(haystack, String(needle));
  throw new RenderFault(`'in' needs a string, list or mapping on the right, not ${typeName(haystack)}`);
}

/** A `namespace()`: the one value a template may assign attributes to (`{% set ns.total = 1 %}`). */
export class Namespace {
  readonly values = new Map<string, unknown>();
}
