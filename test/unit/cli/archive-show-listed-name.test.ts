// `svc archive list` prints each file's name (no directory); `svc archive show NAME` finds that
// name under DIR (--dir, else SVC_ARCHIVE_DIR), as an operator copies it from the list, instead
// of answering 4 "no such file" from any other working directory.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { archiveCommand } from '../../../src/cli/archive-command.ts';

const NAME = 'events-0000000000000000000-0000000000000000010.jsonl';
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-archive-name-'));
  const lines = [{ execution: { execution_id: 7, path: 'demo', status: 'completed' } }, { event: { execution_id: 7, event_id: 1, event_type: 'execution.started' } }];
  await writeFile(join(dir, NAME), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await archiveCommand(argv, { write: (x: string) => (out += x) }, { write: (x: string) => (err += x) }, env);
  return { code, out, err };
}

it('show takes a name as list prints it, under SVC_ARCHIVE_DIR or --dir', async () => {
  const listed = await cli(['list'], { SVC_ARCHIVE_DIR: dir });
  expect(listed.out).toContain(NAME);
  const viaEnv = await cli(['show', NAME, '--json'], { SVC_ARCHIVE_DIR: dir });
  expect(viaEnv.code).toBe(0);
  expect(JSON.parse(viaEnv.out)).toMatchObject({ count: 1, executions: [{ execution_id: 7, events: 1 }] });
  const viaDir = await cli(['show', NAME, '--dir', dir, '--execution', '7', '--json']);
  expect(viaDir.code).toBe(0);
  expect(JSON.parse(viaDir.out).events).toHaveLength(1);
  // A name that is not there: exit 4, naming the path looked at.
  const missing = await cli(['show', 'events-0000000000000000010-0000000000000000020.jsonl'], { SVC_ARCHIVE_DIR: dir });
  expect(missing.code).toBe(4);
  expect(missing.err).toBe(`svc archive: ${join(dir, 'events-0000000000000000010-0000000000000000020.jsonl')}: no such file\n`);
});
