// A secret's _FILE that names an empty file (a secret mount not filled in yet, a file truncated by
// a failed copy) was taken as the variable unset: `svc start` with SVC_ENCRYPTION_KEY_FILE naming
// an empty file generated a key of its own into the data dir and sealed the credentials with it,
// saying nothing; with SVC_DATABASE_URL the refusal said `SVC_ENCRYPTION_KEY is required`, not
// that the file given was empty. Now the file is refused, naming the variable and the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-empty-secret-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.each(['', '\n', '  \r\n\t'])('an X_FILE naming a file that holds only %j is a ConfigError naming the variable and the file', (content) => {
  const file = join(dir, `key-${content.length}`);
  writeFileSync(file, content);
  expect(() => loadConfig({ SVC_ENCRYPTION_KEY_FILE: file })).toThrow(new RegExp(`^invalid SVC_ENCRYPTION_KEY_FILE: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is empty`));
  expect(() => loadConfig({ SVC_WORKER_TOKEN_FILE: file })).toThrow(/^invalid SVC_WORKER_TOKEN_FILE: .* is empty/);
});

it('an empty X_FILE variable itself still means unset', () => {
  expect(loadConfig({ SVC_ENCRYPTION_KEY_FILE: '' }).SVC_ENCRYPTION_KEY).toBeUndefined();
});
