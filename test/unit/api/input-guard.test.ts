import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, parseJsonBody, scanJsonText, urlProblem } from '../../../src/api/input-guard.ts';
import { ServiceError } from '../../../src/errors.ts';

const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

function refusal(text: string): { code: string; errors: unknown } {
  try {
    parseJsonBody(text);
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    return { code: err.code, errors: typeof err.detail === 'string' ? err.detail : err.detail.errors };
  }
  throw new Error(`accepted: ${text.slice(0, 80)}`);
}

describe('scanJsonText', () => {
  it('passes ordinary JSON, escapes, surrogate pairs and free-form unicode', () => {
    for (const text of [
      '{"a":[1,2,{"b":"c"}],"d":null,"e":true}',
      '"plain"',
      '{"s":"tab\\t quote\\" backslash\\\\ slash\\/ nl\\n"}',
      '{"emoji":"\\ud83d\\ude00","raw":"😀 مرحبا e\u0301 a\u200bb"}',
      '{"not a NUL":"\\\\u0000"}', // an escaped backslash, then the text u0000
      '{"k\\"ey":"v\\\\"}',
      '{"brackets in strings":"[[[[{{{{"}',
      '{"unterminated',
    ]) {
      expect(scanJsonText(text), text).toBeUndefined();
    }
  });

  it('refuses NUL and lone surrogates in values and keys, naming the path with the key escaped', () => {
    expect(scanJsonText('{"payload":{"a\\u0000b":1}}')).toEqual({ path: 'payload["a\\u0000b"]', message: expect.stringContaining('NUL') });
    expect(scanJsonText('{"x":[1,{"y":"a\\u0000"}]}')?.path).toBe('x[1].y');
    expect(scanJsonText('{"x":"\\ud800"}')).toEqual({ path: 'x', message: expect.stringContaining('lone surrogate') });
    expect(scanJsonText('{"x":"\\udc00\\ud800"}')?.path).toBe('x'); // a low before a high is not a pair
    expect(scanJsonText('{"x":"\\ud800\\u0041"}')?.path).toBe('x');
    expect(scanJsonText('{"x":"\\ud800"  ,"z":1}')?.path).toBe('x');
    expect(scanJsonText('["a","b","\\u0000"]')?.path).toBe('[2]');
    expect(scanJsonText('"\\u0000"')?.path).toBe('');
    expect(scanJsonText('{"a b":{"\\u0000":1}}')?.path).toBe('["a b"]["\\u0000"]');
    expect(scanJsonText('{"a":1,"b":{"c":2,"d":"\\u0000"}}')?.path).toBe('b.d');
  });

  it(`refuses nesting past ${MAX_JSON_DEPTH} levels, at any depth, without overflowing the stack`, () => {
    expect(scanJsonText(deep(MAX_JSON_DEPTH))).toBeUndefined();
    expect(scanJsonText(deep(MAX_JSON_DEPTH + 1))).toEqual({ path: '[0]'.repeat(MAX_JSON_DEPTH), message: expect.stringContaining('deeper') });
    expect(scanJsonText(deep(1_000_000))?.message).toContain('deeper');
    expect(scanJsonText('{"a":' + '{"b":'.repeat(100) + '1' + '}'.repeat(101))?.path).toBe('a' + '.b'.repeat(MAX_JSON_DEPTH - 1));
  });

  it('refuses integers past 2^53-1 and numbers that overflow; keeps floats and safe integers', () => {
    for (const ok of ['9007199254740991', '-9007199254740991', '1.5e300', '12345678901234567.5', '1e-400', '0.000000000000000000001', '-0', '1E+2']) {
      expect(scanJsonText(`{"n":${ok}}`), ok).toBeUndefined();
    }
    for (const bad of ['9007199254740992', '-9007199254740993', '99999999999999999999999']) {
      expect(scanJsonText(`{"n":[${bad}]}`), bad).toEqual({ path: 'n[0]', message: expect.stringContaining('JavaScript holds exactly') });
    }
    for (const bad of ['1e400', '-1E309', '1' + '0'.repeat(400) + '.5']) {
      expect(scanJsonText(`{"n":${bad}}`), bad).toEqual({ path: 'n', message: expect.stringContaining('out of range') });
    }
    expect(scanJsonText('{"digits in a string":"99999999999999999999999"}')).toBeUndefined();
  });

  it('stays linear on long strings full of escapes and on many strings before one backslash', () => {
    const escapes = `{"s":"${'\\n'.repeat(500_000)}","t":"${'\\"'.repeat(500_000)}"}`;
    const manyStrings = `[${'"abc",'.repeat(300_000)}"\\n"]`;
    const t0 = performance.now();
    expect(scanJsonText(escapes)).toBeUndefined();
    expect(scanJsonText(manyStrings)).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(1_000);
  });
});

describe('parseJsonBody', () => {
  it('parses what passes', () => {
    expect(parseJsonBody('{"a":[1,"x"]}')).toEqual({ a: [1, 'x'] });
  });

  it('answers bad syntax with 400 and the position, never the text', () => {
    expect(refusal('{"secret":"hunter2",}')).toEqual({ code: 'bad_request', errors: 'the body is not valid JSON (at character 20)' });
    expect(refusal('').code).toBe('bad_request');
  });

  it('refuses keys that would poison a prototype, also when escaped', () => {
    expect(refusal('{"a":[{"__proto__":{"x":1}}]}')).toEqual({ code: 'bad_request', errors: [expect.stringMatching(/^a\[0\]\.__proto__: /)] });
    expect(refusal('{"\\u005f_proto__":{}}').errors).toEqual([expect.stringMatching(/^__proto__: /)]);
    expect(refusal('{"b":{"constructor":{"prototype":{}}}}').errors).toEqual([expect.stringMatching(/^b\.constructor: /)]);
    expect(parseJsonBody('{"constructor":"fine","text":"\\"__proto__\\": 1"}')).toEqual({ constructor: 'fine', text: '"__proto__": 1' });
  });

  it('refuses what cannot be stored with 422', () => {
    expect(refusal('{"a":"\\u0000"}')).toEqual({ code: 'unprocessable', errors: [expect.stringMatching(/^a: contains NUL/)] });
  });
});

describe('urlProblem', () => {
  it('names the parameter or query field with NUL or a lone surrogate, and the wildcard as path', () => {
    expect(urlProblem({ '*': 'a\0b' }, {}, '')).toMatchObject({ part: 'params', problem: { path: 'path' }, status: 422 });
    expect(urlProblem({}, { status: ['ok', '\ud800'] }, 'status=ok&status=%ED%A0%80')).toMatchObject({ part: 'querystring', problem: { path: 'status' } });
    expect(urlProblem({}, { 'a\0': '1' }, 'a%00=1')).toMatchObject({ problem: { path: 'a\\u0000' } });
  });

  it('refuses query text whose percent-encoding is not UTF-8 (400), and lets good input through', () => {
    expect(urlProblem({}, { path: '%E0%A4%A' }, 'path=%E0%A4%A')).toMatchObject({ problem: { path: 'path' }, status: 400 });
    expect(urlProblem({ id: '12' }, { q: '100% sure 😀' }, 'q=100%25+sure+%F0%9F%98%80')).toBeUndefined();
  });
});
