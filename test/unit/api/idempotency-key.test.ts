import { describe, expect, it } from 'vitest';
import { idempotencyKeyOf, requestHash } from '../../../src/api/idempotent-starts.ts';
import { ServiceError } from '../../../src/errors.ts';

describe('idempotencyKeyOf', () => {
  it('takes 1 to 255 printable ASCII characters, and no header as no key', () => {
    expect(idempotencyKeyOf({})).toBeUndefined();
    expect(idempotencyKeyOf({ 'idempotency-key': 'a' })).toBe('a');
    expect(idempotencyKeyOf({ 'idempotency-key': '3f0c9e1a-run 42/retry~!' })).toBe('3f0c9e1a-run 42/retry~!');
    expect(idempotencyKeyOf({ 'idempotency-key': 'k'.repeat(255) })).toBe('k'.repeat(255));
  });

  it('refuses anything else with a 422 naming the header', () => {
    for (const value of ['', 'k'.repeat(256), 'caf\u00e9', 'a\tb', 'a\u0000b', ['a', 'b']]) {
      let err: unknown;
      try {
        idempotencyKeyOf({ 'idempotency-key': value });
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(value)).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).code).toBe('unprocessable');
      expect((err as ServiceError).detail).toMatchObject({ errors: [expect.stringMatching(/^Idempotency-Key: /)] });
    }
  });
});

describe('requestHash', () => {
  it('is the same for the same body in any key order, at any depth', () => {
    const a = { path: 'p', payload: { b: [1, { y: 2, x: 1 }], a: null } };
    const b = { payload: { a: null, b: [1, { x: 1, y: 2 }] }, path: 'p' };
    expect(requestHash(a)).toBe(requestHash(b));
  });

  it('differs for any other value, array order included', () => {
    const base = requestHash({ path: 'p', payload: { list: [1, 2] } });
    expect(requestHash({ path: 'p', payload: { list: [2, 1] } })).not.toBe(base);
    expect(requestHash({ path: 'p', payload: { list: [1, 2], more: true } })).not.toBe(base);
    expect(requestHash({ path: 'q', payload: { list: [1, 2] } })).not.toBe(base);
    expect(requestHash({ path: 'p', payload: { list: ['1', 2] } })).not.toBe(base);
  });
});
