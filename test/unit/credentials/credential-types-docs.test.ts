// docs/playbook-dsl.md's credential table is the registry's (src/credential/credential-types.ts), row for row.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_TYPE_SPECS, CREDENTIAL_TYPES, credentialDataErrors } from '../../../src/credential/credential-types.ts';

const text = readFileSync(path.resolve(import.meta.dirname, '../../../docs/playbook-dsl.md'), 'utf8');
const docs = text.slice(text.indexOf('\n## Credentials\n'));

describe('credential types', () => {
  it('every type has a row in the docs naming each of its fields, secret ones as such, and its test', () => {
    expect(CREDENTIAL_TYPE_SPECS.map((s) => s.type)).toEqual([...CREDENTIAL_TYPES]);
    for (const spec of CREDENTIAL_TYPE_SPECS) {
      const row = docs.split('\n').find((line) => line.startsWith(`| \`${spec.type}\` |`));
      expect(row, spec.type).toBeDefined();
      for (const field of spec.fields) {
        expect(row, `${spec.type}.${field.name}`).toContain(`\`${field.name}\``);
        if (field.secret && !field.aliasOf) expect(row, `${spec.type}.${field.name}`).toContain(`\`${field.name}\` (secret)`);
      }
      expect(row?.trim().endsWith(`| ${spec.test ?? '—'} |`), spec.type).toBe(true);
    }
  });

  it('each example is valid data of its type', () => {
    for (const spec of CREDENTIAL_TYPE_SPECS) expect(credentialDataErrors(spec.type, spec.example), spec.type).toEqual([]);
  });
});
