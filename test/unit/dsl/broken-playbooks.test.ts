import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

// Every playbook in test/fixtures/broken is refused with the problem its first line expects:
// `# expect: <path> <line> <part of the message>` (issue 30: authoring that catches mistakes).
const dir = join(import.meta.dirname, '../../fixtures/broken');
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();

describe('broken playbooks corpus', () => {
  it('holds at least 40 playbooks', () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
  });

  it.each(files)('%s is refused naming its field and line', (file) => {
    const text = readFileSync(join(dir, file), 'utf8');
    const expectation = /^# expect: (\S+) (\d+) (.+)$/m.exec(text.split('\n')[0]);
    if (!expectation) throw new Error(`${file}: first line must be # expect: <path> <line> <substring>`);
    const [, path, line, part] = expectation;
    const result = parsePlaybook(text);
    if (result.ok) throw new Error(`${file}: registered without a problem`);
    const problem = result.problems.find((p) => p.path === path);
    expect(problem, `${file}: ${JSON.stringify(result.problems)}`).toBeDefined();
    expect(problem?.message).toContain(part);
    expect(problem?.line).toBe(Number(line));
    expect(problem?.column).toBeGreaterThan(0);
  });
});
