// `svc archive` read SVC_ARCHIVE_DIR raw, not as the server parsed it: a value with white space
// around it (`SVC_ARCHIVE_DIR=/var/svc/archive ` in an env file) was a directory the server wrote
// to (it trims) and one `svc archive list` did not find, answering "no archive files under
// /var/svc/archive " (exit 0); a relative one, which the server refuses at start, was listed
// relative to wherever the command ran. Both are now read as the server reads them.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { archiveCommand } from '../../../src/cli/archive-command.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-archive-setting-'));
  await writeFile(join(dir, 'events-0000000000000000001-0000000000000001000.jsonl'), '');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function list(env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await archiveCommand(['list', '--json'], { write: (x: string) => (out += x) }, { write: (x: string) => (err += x) }, env);
  return { code, out, err };
}

it('SVC_ARCHIVE_DIR with white space around it lists the directory the server archives to', async () => {
  const r = await list({ SVC_ARCHIVE_DIR: ` ${dir} ` });
  expect(r.code, r.err).toBe(0);
  expect(JSON.parse(r.out)).toMatchObject({ count: 1 });
});

it('a relative SVC_ARCHIVE_DIR is refused as the server refuses it (exit 78, naming it)', async () => {
  const r = await list({ SVC_ARCHIVE_DIR: 'archive' });
  expect(r).toMatchObject({ code: 78, out: '' });
  expect(r.err).toMatch(/^svc archive: invalid SVC_ARCHIVE_DIR: expects an absolute path/);
});
