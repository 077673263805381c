// `svc doctor detect` waits for its detection playbooks up to --timeout-seconds (60 by default):
// with every worker slot busy it printed nothing for as long, and a person at a terminal could
// not tell a wait from a hang. On a terminal it now says what it waits for, on stderr, redrawn
// in place and wiped before the outcome; piped, stdout is the outcome object alone and stderr
// stays empty.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { NODE24, ROOT, withTimeout } from '../../helpers/process.ts';
import { runDoctor, startSvc, type StartedSvc } from './run-doctor.ts';

// Holds the one worker slot while detect waits.
const BUSY = `apiVersion: svc/v1
kind: Playbook
metadata: { name: busy, path: audit/busy }
workflow:
  - step: start
    tool: { name: s, kind: postgres, read_only: true, command: "SELECT pg_sleep(3)" }
`;

let svc: StartedSvc | undefined;
beforeAll(async () => {
  svc = await startSvc({ SVC_WORKER_CONCURRENCY: '1' });
  expect((await http(svc.url, 'POST', '/api/catalog/playbook', { content: BUSY })).status).toBe(201);
}, 90_000);
afterAll(async () => {
  await svc?.stop();
});

/** `svc doctor <args>` on a terminal (util-linux `script` gives it one): everything it showed there. */
async function onTerminal(args: string): Promise<{ code: number | null; shown: string }> {
  const proc = spawn('script', ['-qec', `${NODE24} ${ROOT}src/cli.ts doctor ${args}`, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let shown = '';
  proc.stdout.on('data', (c) => (shown += String(c)));
  const code = await withTimeout(new Promise<number | null>((r) => proc.on('close', (c) => r(c))), 60_000, 'svc doctor on a terminal');
  return { code, shown };
}

it('says what it waits for on a terminal, and nothing of it when piped', async () => {
  const url = svc!.url;
  expect((await http(url, 'POST', '/api/run/playbook', { path: 'audit/busy' })).status).toBe(200);
  const run = await onTerminal(`detect --server ${url}`);
  expect(run.shown).toMatch(/waiting for the detection playbooks: \d of 4 done, \d+ s of at most 60 s/);
  expect(run.shown).toContain(`svc doctor detect: OK at ${url}`);
  expect(run.code).toBe(0);

  expect((await http(url, 'POST', '/api/run/playbook', { path: 'audit/busy' })).status).toBe(200);
  const piped = await runDoctor(['detect', '--server', url]);
  expect(piped.stderr).toBe('');
  expect(piped.json()).toMatchObject({ action: 'detect', severity: 'ok' });
}, 90_000);
