import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { checkEntrySchema } from '../../../src/worker/keychain-schema-check.ts';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { log: createLogger('debug', sink), lines };
}

describe('checkEntrySchema', () => {
  it('no schema, or data that passes: no errors, nothing logged', () => {
    const { log, lines } = capture();
    expect(checkEntrySchema('api', { access_token: 'x' }, null, log)).toEqual([]);
    expect(checkEntrySchema('api', { access_token: 'x' }, undefined, log)).toEqual([]);
    expect(checkEntrySchema('api', { access_token: 'x' }, { required: ['access_token'], types: { access_token: 'string' } }, log)).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('a failure: one warning with the spec wording, errors naming fields and types, never a value', () => {
    const { log, lines } = capture();
    const errors = checkEntrySchema(
      'api',
      { access_token: 'tok-value-123', extra: 'extra-value-456' },
      { fields: ['access_token'], required: ['scope'], types: { access_token: 'integer' } },
      log,
      { execution_id: 7 },
    );
    expect(errors).toEqual(['Missing required field: scope', "Field 'access_token' must be integer, got string", 'Unexpected fields: extra']);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 40,
      keychain: 'api',
      execution_id: 7,
      msg: "KEYCHAIN: Entry 'api' fails its schema: Missing required field: scope; Field 'access_token' must be integer, got string; Unexpected fields: extra",
    });
    expect(lines[0]).not.toContain('tok-value-123');
    expect(lines[0]).not.toContain('extra-value-456');
  });

  it('a malformed schema is reported as such, not passed silently', () => {
    const { log, lines } = capture();
    expect(checkEntrySchema('api', { a: 1 }, ['not', 'an', 'object'], log)).toEqual(['Invalid schema: schema must be a JSON object']);
    expect(lines[0]).toContain("KEYCHAIN: Entry 'api' fails its schema: Invalid schema: schema must be a JSON object");
  });
});
