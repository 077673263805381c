import { describe, expect, it } from 'vitest';
import { asObject, isObject, isPlainObject } from '../../src/objects.ts';

describe('objects', () => {
  it('isObject: JSON objects and class instances, not null, arrays or primitives', () => {
    for (const yes of [{}, { a: 1 }, Object.create(null), new Date(0), new Map()]) expect(isObject(yes)).toBe(true);
    for (const no of [null, undefined, [], [1], 'x', 0, true, () => {}]) expect(isObject(no)).toBe(false);
  });

  it('asObject: the object itself, else a new empty one', () => {
    const o = { a: 1 };
    expect(asObject(o)).toBe(o);
    for (const no of [null, undefined, [1], 'x', 3]) expect(asObject(no)).toEqual({});
    expect(asObject(null)).not.toBe(asObject(null));
  });

  it('isPlainObject: plain data only (Object.prototype or no prototype)', () => {
    for (const yes of [{}, { a: 1 }, Object.create(null), JSON.parse('{"__proto__": 1}')]) expect(isPlainObject(yes)).toBe(true);
    for (const no of [null, [], new Date(0), new Map(), new (class A {})(), new Error('x'), 'x']) expect(isPlainObject(no)).toBe(false);
  });
});
