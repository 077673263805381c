// A client command whose reader went away stops quietly. `svc logs ID --follow | head -3` kept
// following after head had exited, then crashed at its next write with an unhandled 'error'
// event (write EPIPE) and its stack trace on stderr, exit 1; `svc inspect ID --json | head`
// the same. It now stops at that write with 141, as a shell reports a command SIGPIPE ended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForOutput, withTimeout } from '../../helpers/process.ts';

const NAP = `apiVersion: svc/v1
kind: Playbook
metadata: { name: nap, path: cli/audit/nap }
workflow:
  - step: nap
    wait: { for: 1h }
`;

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
  await executionApi(a.url).register(NAP);
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
});
