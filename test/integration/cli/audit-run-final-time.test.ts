// `svc run --wait` ends with `execution N completed after T`. T was the client's own wait: its
// polls back off to a second while nothing changes, so it saw the end up to a second late (and
// counted its registration too): a step of 1.6 s "completed after 2.1s", where `svc status` and
// the API say the execution ran 1.6 s. T is now the execution's run time, as the server has it.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { formatElapsed } from '../../../src/cli/progress-view.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
});
afterAll(async () => {
  await s?.close();
});

function svcRun(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'run', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: s.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += String(c)));
  proc.stderr.on('data', (c) => (stderr += String(c)));
  return new Promise((ok) => proc.on('close', (code) => ok({ code, stdout, stderr })));
}

it('the final line gives the execution\'s run time, not how long the client took to see its end', async () => {
  // 1.6 s: past the client's poll at about 1.4 s after the step's start, its next one comes about 0.75 s later.
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: nap, path: cli/final-time }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: "sleep 1.6" }
`);
  const r = await svcRun(['cli/final-time', '--wait']);
  expect(r.code, r.stderr).toBe(0);
  const id = Number(/^execution (\d+) started/m.exec(r.stdout)?.[1]);
  const e = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
  const ran = Date.parse(e.finished_at) - Date.parse(e.started_at);
  expect(r.stdout).toMatch(new RegExp(`^execution ${id} completed after ${formatElapsed(ran).replace('.', '\\.')} \\(1/1 steps\\)$`, 'm'));
});
