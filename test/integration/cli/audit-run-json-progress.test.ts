// `svc run PLAYBOOK --wait --json | jq .result` at a terminal showed nothing for as long as the
// execution ran: --json silenced the progress along with the text, though only stdout is the
// program's. With --json the live line now goes to stderr when stderr is a terminal (stdout
// holds the status object alone), and nowhere when it is not.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NODE24, ROOT, runSvc, withTimeout } from '../../helpers/process.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const SLOW = `apiVersion: svc/v1
kind: Playbook
metadata: { name: slowjson, path: cli/audit/slowjson }
workflow:
  - step: fetch
    tool: { name: call, kind: http, url: "{{ workload.base }}/delay/1500" }
`;

let s: TestStack;
let target: HttpTarget;
let dir: string;
beforeAll(async () => {
  s = await startTestStack();
  target = await startHttpTarget();
  await s.register(SLOW);
  dir = await mkdtemp(join(tmpdir(), 'svc-run-json-'));
});
afterAll(async () => {
  await s?.close();
  await target?.close();
  await rm(dir, { recursive: true, force: true });
});

it('--wait --json: the live line on a terminal stderr, the status object alone on stdout', async () => {
  const file = join(dir, 'out.json');
  const payload = JSON.stringify({ base: target.url });
  // util-linux `script` gives the command a terminal; its stdout goes to the file, as to `| jq`.
  const command = `${NODE24} ${ROOT}src/cli.ts run cli/audit/slowjson --wait --json --payload '${payload}' > ${file}`;
  const proc = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: s.url }, stdio: ['ignore', 'pipe', 'pipe'] });
  let terminal = '';
  proc.stdout.on('data', (c) => (terminal += String(c)));
  const code = await withTimeout(new Promise<number | null>((r) => proc.on('close', (c) => r(c))), 60_000, 'svc run on a terminal');
  expect(code, terminal).toBe(0);
  expect(terminal).toMatch(/running {2}· {2}0\/1 steps done {2}· {2}now: fetch/);
  expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ status: 'completed', path: 'cli/audit/slowjson' });

  // No terminal: nothing but the object, stderr empty.
  const piped = await runSvc(['run', 'cli/audit/slowjson', '--wait', '--json', '--payload', payload], { SVC_SERVER_URL: s.url });
  expect(piped.code).toBe(0);
  expect(piped.stderr).toBe('');
  expect(JSON.parse(piped.stdout)).toMatchObject({ status: 'completed' });
});
