// A client command whose reader went away stops quietly. `svc logs ID --follow | head -3` kept
// following after head had exited, then crashed at its next write with an unhandled 'error'
// event (write EPIPE) and its stack trace on stderr, exit 1; `svc inspect ID --json | head`
// the same. It now stops at that write with 141, as a shell reports a command SIGPIPE ended.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { NODE24, ROOT, spawnSvc, waitForOutput, withTimeout } from '../../helpers/process.ts';

const NAP = `apiVersion: svc/v1
kind: Playbook
metadata: { name: nap, path: cli/audit/nap }
workflow:
  - step: nap
    wait: { for: 1h }
`;

const DOZE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: doze, path: cli/audit/doze }
workflow:
  - step: doze
    wait: { for: 2s }
`;

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
  await executionApi(a.url).register(NAP);
  await executionApi(a.url).register(DOZE);
}, 60_000);
afterAll(async () => a?.close());

describe('a reader that goes away', () => {
  it('stops svc logs --follow at its next line with 141, no stack trace', async () => {
    const id = await executionApi(a.url).run('cli/audit/nap');
    const p = spawnSvc(['logs', String(id), '--follow'], { SVC_SERVER_URL: a.url });
    await waitForOutput(p, 'timer.set', 15_000);
    p.proc.stdout!.destroy(); // the reader goes away, as head does once it has its lines
    // New events to print: the pause and the resume.
    expect((await http(a.url, 'POST', `/api/executions/${id}/pause`, {})).status).toBe(200);
    expect((await http(a.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
    const code = await withTimeout(p.exited, 15_000, 'svc logs --follow to stop');
    expect(p.output()).not.toMatch(/EPIPE|Unhandled|node:internal/);
    expect(code).toBe(141);
  }, 60_000);

  // Its last lines are written as the execution ends, and the command returns at once: through
  // a pipe (a shell's `|`, not a socket) the failed write's EPIPE reached the wait for the output
  // to drain before the 141 handler, and the command exited 0, as if everything had been read.
  it('exits 141, not 0, through a pipe whose reader left before the last lines of the execution', async () => {
    const id = await executionApi(a.url).run('cli/audit/doze');
    const shell = spawn('bash', ['-c', '"$0" src/cli.ts logs "$1" --follow | head -3 >/dev/null; echo "svc exited ${PIPESTATUS[0]}"', NODE24, String(id)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: a.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    shell.stdout.on('data', (c) => (out += String(c)));
    shell.stderr.on('data', (c) => (out += String(c)));
    await withTimeout(new Promise((r) => shell.on('close', r)), 30_000, 'svc logs --follow | head to end');
    expect(out).not.toMatch(/EPIPE|Unhandled|node:internal/);
    expect(out.trim()).toBe('svc exited 141');
  }, 60_000);
});
