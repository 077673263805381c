import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { jsonSchema } from '../../src/api/validation.ts';
import { ExecutionState } from '../../src/cli/execution-status-view.ts';
import { ownKeysRecord } from '../../src/own-keys-record.ts';

describe('ownKeysRecord', () => {
  it('keeps the keys v.record drops (prototype, constructor), as own properties', () => {
    const input = JSON.parse('{"prototype": 1, "constructor": "c", "n": 2}');
    expect(v.parse(v.record(v.string(), v.unknown()), input)).toEqual({ n: 2 });
    const out = v.parse(ownKeysRecord(v.string(), v.unknown()), input);
    expect(out).toEqual({ prototype: 1, constructor: 'c', n: 2 });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    // A __proto__ key (JSON.parse makes it an own key) stays a key: the prototype is not set.
    const proto = v.parse(ownKeysRecord(v.string(), v.unknown()), JSON.parse('{"__proto__": {"polluted": true}}'));
    expect(Object.hasOwn(proto, '__proto__')).toBe(true);
    expect((proto as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('validates keys and values as v.record does, each issue at its path', () => {
    const schema = ownKeysRecord(v.pipe(v.string(), v.regex(/^[a-z]+$/, 'lower case')), v.object({ n: v.number('a number') }));
    const r = v.safeParse(schema, { ok: { n: 1 }, BAD: { n: 2 }, constructor: { n: 'x' } });
    expect(r.success).toBe(false);
    expect(r.issues?.map((i) => `${v.getDotPath(i)}: ${i.message}`)).toEqual(['BAD: lower case', 'constructor.n: a number']);
    expect(v.safeParse(schema, 'text').success).toBe(false);
    expect(v.safeParse(schema, null).success).toBe(false);
    // Values are the schema's output (transforms applied).
    expect(v.parse(ownKeysRecord(v.string(), v.pipe(v.unknown(), v.transform(String))), { prototype: 7 })).toEqual({ prototype: '7' });
  });

  it("keeps a step named constructor in the CLI's view of an execution's state", () => {
    const state = v.parse(ExecutionState, JSON.parse('{"steps": {"start": {"status": "completed"}, "constructor": {"status": "running"}}}'));
    expect(Object.keys(state.steps)).toEqual(['start', 'constructor']);
  });

  it('is documented as the v.record it validates like', () => {
    expect(jsonSchema(v.object({ payload: ownKeysRecord(v.string(), v.number()) }))).toEqual(jsonSchema(v.object({ payload: v.record(v.string(), v.number()) })));
  });
});

describe('valibot records in the service', () => {
  it('are ownKeysRecord (inputs: too: v.record took a list for a mapping keyed "0", "1"; it refuses the reserved names first)', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join, relative } = await import('node:path');
    const root = join(import.meta.dirname, '../..');
    const files = ['src', 'actors', 'machines'].flatMap((dir) =>
      readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && e.name.endsWith('.ts'))
        .map((e) => relative(root, join(e.parentPath, e.name))),
    );
    const using = files.filter((f) => /\bv\.record\(/.test(readFileSync(join(root, f), 'utf8')));
    expect(using.sort()).toEqual(['src/own-keys-record.ts']);
  });
});
