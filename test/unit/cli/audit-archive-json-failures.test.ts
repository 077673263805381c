// `svc archive ... --json` of a file or directory it cannot read (no such file, no such --dir, a
// torn line, an execution not in the file) exited 4 or 1 with stdout empty, the reason on stderr
// only: a program reading stdout as --json asks found nothing. It now also writes
// {error, status: null, detail} there (no server asked: no status), the exit code as before.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { archiveCommand } from '../../../src/cli/archive-command.ts';
import { Capture } from '../../helpers/capture.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-archive-json-'));
  await writeFile(join(dir, 'one.jsonl'), `${JSON.stringify({ execution: { execution_id: 7, path: 'demo', status: 'completed' } })}\n`);
  await writeFile(join(dir, 'torn.jsonl'), '{"event": {"execution_id": 7, "ev\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = new Capture();
  const err = new Capture();
  const code = await archiveCommand(argv, out, err, {});
  return { code, out: out.text, err: err.text };
}

it.each([
  [['show', 'MISSING', '--json'], 4, 'MISSING: no such file'],
  [['list', '--dir', 'MISSING', '--json'], 4, 'MISSING: no such directory'],
  [['show', 'TORN', '--json'], 1, 'TORN: line 1 is not JSON (an archive file is JSON Lines)'],
  [['show', 'ONE', '--execution', '8', '--json'], 4, 'execution 8 is not in one.jsonl'],
])('svc archive %j: the failure on stdout as JSON too', async (args, code, said) => {
  const path = (s: string) => s.replace('MISSING', join(dir, 'missing')).replace('TORN', join(dir, 'torn.jsonl')).replace('ONE', join(dir, 'one.jsonl'));
  const r = await cli(...args.map(path));
  expect(r.code, r.err).toBe(code);
  expect(JSON.parse(r.out)).toEqual({ error: `svc archive: ${path(said)}`, status: null, detail: path(said) });
  expect(r.err).toBe(`svc archive: ${path(said)}\n`);
});
