// `svc archive` reads files only: what goes wrong with a file or a directory is said as such
// (which file, which line), never as an unreachable server (exit 3 is for a server not answering).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiveCommand } from '../../../src/cli/archive-command.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-archive-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await archiveCommand(argv, { write: (x: string) => (out += x) }, { write: (x: string) => (err += x) }, {});
  return { code, out, err };
}

const execution = JSON.stringify({ execution: { execution_id: 7, path: 'demo', status: 'COMPLETED' } });

describe('svc archive: bad files and directories', () => {
  it('show: a line that is not JSON is named by file and line number (exit 1)', async () => {
    const file = join(dir, 'torn.jsonl');
    await writeFile(file, `${execution}\n{"event": {"execution_id": 7, "ev\n`);
    const r = await cli('show', file);
    expect(r).toMatchObject({ code: 1, out: '' });
    expect(r.err).toBe(`svc archive: ${file}: line 2 is not JSON (an archive file is JSON Lines)\n`);
  });

  it('list: a --dir that does not exist is said so (exit 4), not listed as empty; SVC_ARCHIVE_DIR not made yet is empty', async () => {
    const missing = join(dir, 'no-such-dir');
    const r = await cli('list', '--dir', missing);
    expect(r).toMatchObject({ code: 4, out: '' });
    expect(r.err).toBe(`svc archive: ${missing}: no such directory\n`);
    let out = '';
    const code = await archiveCommand(['list'], { write: (x: string) => (out += x) }, { write: () => {} }, { SVC_ARCHIVE_DIR: missing });
    expect({ code, out }).toEqual({ code: 0, out: `no archive files under ${missing}\n` });
  });

  it('show: a directory is said to be one (exit 1)', async () => {
    const r = await cli('show', dir);
    expect(r).toMatchObject({ code: 1, out: '' });
    expect(r.err).toBe(`svc archive: ${dir}: is a directory, not an archive file\n`);
  });

  it('list: a --dir that is a file is said to be one, not an unreachable server (exit 1)', async () => {
    const file = join(dir, 'plain.txt');
    await writeFile(file, 'x');
    const r = await cli('list', '--dir', file);
    expect(r).toMatchObject({ code: 1, out: '' });
    expect(r.err).toBe(`svc archive: ${file}: not a directory\n`);
  });
});
