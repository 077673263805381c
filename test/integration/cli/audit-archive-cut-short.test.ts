// `svc archive show` of an archive file cut short mid-line (a copy that stopped, a full disk)
// said "line 3 is not JSON (an archive file is JSON Lines)", as of a file written wrong, though
// every line retention writes is whole and ends with a newline. A last line that is not JSON and
// has no newline is now said to be where the file was cut short; a bad line inside a file, or a
// last one that ends with its newline, is still "not JSON".
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-archive-cut-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lines = [
  { execution: { execution_id: 7, path: 'cut/ünï', status: 'completed', started_at: '2026-01-01T00:00:00+00:00', finished_at: '2026-01-01T00:00:01+00:00', last_event_id: 2 } },
  { event: { execution_id: 7, event_id: 1, event_type: 'execution.started', status: 'running', step: null, created_at: '2026-01-01T00:00:00+00:00' } },
  { event: { execution_id: 7, event_id: 2, event_type: 'playbook.completed', status: 'completed', step: null, created_at: '2026-01-01T00:00:01+00:00' } },
].map((l) => `${JSON.stringify(l)}\n`);
const whole = lines.join('');

const show = async (name: string, text: string) => {
  const file = join(dir, name);
  await writeFile(file, text);
  return { file, ...(await runSvc(['archive', 'show', file], {})) };
};

it('says where a file cut short ends; a line written wrong is still not JSON', async () => {
  const ok = await show('whole.jsonl', whole);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toMatch(/^7\s+cut\/ünï\s+completed\s.*\s2$/m);

  const cut = await show('cut.jsonl', whole.slice(0, whole.length - 20));
  expect(cut.code).toBe(1);
  expect(cut.stderr).toBe(`svc archive: ${cut.file}: the file ends inside line 3 (it was cut short: every line of an archive ends with a newline)\n`);

  const ended = await show('ended.jsonl', `${whole.slice(0, whole.length - 20)}\n`);
  expect(ended.stderr).toBe(`svc archive: ${ended.file}: line 3 is not JSON (an archive file is JSON Lines)\n`);
  const inside = await show('inside.jsonl', `${lines[0]}${lines[1].slice(0, 30)}\n${lines[2]}`);
  expect(inside.stderr).toBe(`svc archive: ${inside.file}: line 2 is not JSON (an archive file is JSON Lines)\n`);
});
