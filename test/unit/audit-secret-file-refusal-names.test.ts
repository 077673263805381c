// A bad value read from a secret's _FILE was refused as `invalid SVC_ENCRYPTION_KEY: expects
// base64 of exactly 32 bytes`: an operator who set no SVC_ENCRYPTION_KEY, only the file, was sent
// to the wrong place. And a SVC_ENCRYPTION_KEYS_OLD(_FILE) with one key per line (as secret files
// are often written) was `item 1 of 1: expects base64 …`, though each line was a good key: the
// list is comma separated, which the refusal did not say. Both refusals now say so.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-secret-refusal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const key = () => randomBytes(32).toString('base64');

it('a bad value from X_FILE is refused naming X_FILE and the file, never the value', () => {
  const file = join(dir, 'short-key');
  const short = randomBytes(16).toString('base64');
  writeFileSync(file, `${short}\n`);
  let message = '';
  try {
    loadConfig({ SVC_ENCRYPTION_KEY_FILE: file });
  } catch (err) {
    message = err instanceof Error ? err.message : String(err);
  }
  expect(message).toMatch(/^invalid SVC_ENCRYPTION_KEY_FILE: /);
  expect(message).toContain(file);
  expect(message).toContain('expects base64 of exactly 32 bytes');
  expect(message).not.toContain(short);
  // Given in the variable itself, the refusal names the variable, as before.
  expect(() => loadConfig({ SVC_ENCRYPTION_KEY: short })).toThrow(/^invalid SVC_ENCRYPTION_KEY: expects base64/);
});

it('old keys one per line: the refusal says the list is comma separated', () => {
  const file = join(dir, 'old-keys');
  writeFileSync(file, `${key()}\n${key()}\n`);
  expect(() => loadConfig({ SVC_ENCRYPTION_KEYS_OLD_FILE: file })).toThrow(/separate[sd]? .*commas/);
  expect(() => loadConfig({ SVC_ENCRYPTION_KEYS_OLD: `${key()} ${key()}` })).toThrow(/^invalid SVC_ENCRYPTION_KEYS_OLD: .*separate[sd]? .*commas/);
  // Commas, with white space around them, are taken.
  expect(loadConfig({ SVC_ENCRYPTION_KEYS_OLD: `${key()},\n ${key()}` }).SVC_ENCRYPTION_KEYS_OLD).toBeDefined();
});
