import { describe, expect, it } from 'vitest';
import { readJsonText, scanJsonText } from '../../../src/api/input-guard.ts';
import { NUL_ESCAPE, STORABLE_MAX_DEPTH, storable, storableOutcome } from '../../../src/worker/storable.ts';
import { SECRET_MASK, SecretMask } from '../../../src/credential/redact-secrets.ts';

// What PostgreSQL refuses in jsonb and text: a NUL, or a lone surrogate, in any string or key.
const bad = (text: string): boolean => text.includes('\u0000') || !text.isWellFormed();
const unstorable = (value: unknown): boolean =>
  typeof value === 'string' ? bad(value)
  : Array.isArray(value) ? value.some(unstorable)
  : value !== null && typeof value === 'object' ? Object.entries(value).some(([k, v]) => bad(k) || unstorable(v))
  : false;

describe('storable', () => {
  it('escapes NUL as the text \\u0000 and lone surrogates as U+FFFD, in values and keys, listing the paths', () => {
    const outcome = { status: 'ok' as const, data: { stdout: 'a\u0000b', stderr: '', rows: [{ 'k\u0000': 'x' }, { lone: 'a\ud800b', pair: '😀' }] } };
    const stored = storableOutcome(outcome);
    expect(stored.data).toEqual({ stdout: `a${NUL_ESCAPE}b`, stderr: '', rows: [{ [`k${NUL_ESCAPE}`]: 'x' }, { lone: 'a\ufffdb', pair: '😀' }] });
    expect(stored.escaped).toEqual(['data.stdout', `data.rows.0.k${NUL_ESCAPE}`, 'data.rows.1.lone']);
    expect(unstorable(outcome)).toBe(true);
    expect(unstorable(stored)).toBe(false);
    // The original is not changed: later tasks of the command see the output as it was.
    expect(outcome.data.stdout).toBe('a\u0000b');
  });

  it('changes nothing and copies nothing when there is nothing to escape or mask', () => {
    const outcome = { status: 'ok' as const, data: { body: { items: [1, 'two', { three: true }] }, when: new Date(0) } };
    const stored = storableOutcome(outcome, new SecretMask());
    expect(stored).toBe(outcome);
    expect(stored.escaped).toBeUndefined();
  });

  it('stores a value nested deeper than the limit as its JSON text', () => {
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 5_000; i++) deep = { d: deep };
    const { value, escaped } = storable(deep);
    expect(escaped).toEqual([Array(STORABLE_MAX_DEPTH).fill('d').join('.')]);
    let at = value;
    for (let i = 0; i < STORABLE_MAX_DEPTH; i++) at = (at as { d: unknown }).d;
    expect(typeof at).toBe('string');
    expect(JSON.parse(JSON.stringify(value))).toBeTruthy();
    expect(unstorable(value)).toBe(false);
  });

  it('leaves nothing JSON.stringify would throw on: bigints become text, a cycle a placeholder', () => {
    const cyclic: Record<string, unknown> = { n: 12345678901234567890n };
    cyclic.self = cyclic;
    const { value, escaped } = storable(cyclic);
    expect(() => JSON.stringify(value)).not.toThrow();
    expect((value as { n: unknown }).n).toBe('12345678901234567890');
    expect(escaped[0]).toBe('n');
  });

  it('writes integers past 2^53 (already rounded) as text, which the server takes; keeps floats and safe integers', () => {
    const { value, escaped } = storable({ big: 2 ** 60, neg: -(2 ** 53), safe: Number.MAX_SAFE_INTEGER, float: 1.5e300, half: 0.5 });
    expect(value).toEqual({ big: '1152921504606847000', neg: '-9007199254740992', safe: Number.MAX_SAFE_INTEGER, float: 1.5e300, half: 0.5 });
    expect(scanJsonText(JSON.stringify(value))).toBeUndefined();
    expect(escaped).toEqual(['big', 'neg']);
  });

  it("writes keys that would change a prototype where the server reads the report escaped, so the report is taken and no key is lost", () => {
    // As a target's JSON answer is parsed: __proto__ an own key.
    const answer = JSON.parse('{"ok": true, "__proto__": {"polluted": 1}, "c": {"constructor": {"prototype": {"x": 1}}, "constructor2": 1}}');
    for (const mask of [undefined, new SecretMask(['hunter22'])]) {
      const { value, escaped } = storable(answer, mask);
      expect(value).toEqual({ ok: true, '\\u005f_proto__': { polluted: 1 }, c: { '\\u0063onstructor': { prototype: { x: 1 } }, constructor2: 1 } });
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(escaped).toEqual(['__proto__', 'c.constructor']);
      // The server takes it (it refuses a body with such a key: 400), and reads the same keys back.
      const read = readJsonText(JSON.stringify({ result: value }));
      expect(read).toEqual({ value: { result: value } });
    }
    // A constructor key over anything but an object with a prototype is an ordinary key.
    expect(storable({ constructor: 'x' }).value).toEqual({ constructor: 'x' });
  });

  it('masks secrets in values, keys and flattened text, and names at most ten paths', () => {
    const mask = new SecretMask(['hunter22']);
    const { value } = storable({ 'x-hunter22': 'token hunter22', list: ['aaa hunter22 bbb'] }, mask);
    expect(value).toEqual({ [`x-${SECRET_MASK}`]: `token ${SECRET_MASK}`, list: [`aaa ${SECRET_MASK} bbb`] });
    const many = storable(Array.from({ length: 15 }, () => '\u0000'));
    expect(many.escaped).toHaveLength(11);
    expect(many.escaped.at(-1)).toBe('(5 more)');
  });
});
