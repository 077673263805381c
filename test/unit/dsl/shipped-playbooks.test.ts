import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { registrationWarnings } from '../../../src/api/playbook-statechart.ts';
import { isObject } from '../../../src/objects.ts';

// The playbooks we ship and document keep registering, without a problem or a warning, as
// authoring grows stricter (issue 30).
const root = join(import.meta.dirname, '../../..');
const yamlFiles = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? yamlFiles(join(dir, e.name)) : e.name.endsWith('.yaml') ? [join(dir, e.name)] : []));
const isPlaybook = (text: string): boolean => {
  const doc: unknown = load(text);
  return isObject(doc) && (doc.kind === undefined || doc.kind === 'Playbook') && Array.isArray(doc.workflow);
};
const files = [...yamlFiles('examples'), ...yamlFiles('src/doctor/playbooks')].filter((f) => isPlaybook(readFileSync(join(root, f), 'utf8')));
// Every whole playbook (a block that starts with apiVersion:, of kind Playbook) the README and docs/ show.
const docFiles = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const docBlocks = docFiles.flatMap((file) =>
  [...readFileSync(join(root, file), 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => b.startsWith('apiVersion:') && isPlaybook(b)).map((b, i) => [`${file} playbook ${i}`, b] as const),
);

describe('shipped playbooks register without a problem or a warning', () => {
  it.each(files)('%s', (file) => {
    const result = parsePlaybook(readFileSync(join(root, file), 'utf8'));
    expect(result.ok ? [] : result.problems).toEqual([]);
    if (result.ok) expect(registrationWarnings(result.playbook)).toEqual([]);
  });

  it('finds the playbooks the docs show', () => expect(docBlocks.length).toBeGreaterThanOrEqual(5));

  it.each(docBlocks)('%s', (_, text) => {
    const result = parsePlaybook(text);
    expect(result.ok ? [] : result.problems).toEqual([]);
  });
});
