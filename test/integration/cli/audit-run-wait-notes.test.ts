// `svc run --wait` printed `step approve started` and then nothing for as long as the step waited
// for its signal (the example's approval: a day), never saying what it waited for nor how to send
// it; a timer, a pause and a resume were as silent, so a paused execution looked like one running.
// It now says each, as it happens: `step approve waits for signal approval (roles admin), times
// out at …: svc signal 7 approval --data JSON`, `step cool waits until …`, `paused by local
// (lunch): no step runs until it is resumed (svc resume 7)`, `resumed by local`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForOutput, withTimeout } from '../../helpers/process.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
  const content = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: notes, path: run_notes/approve }
workflow:
  - step: cool
    wait: { for: 1s }
    next: approve
  - step: approve
    wait: { signal: approval, timeout: 1h, approval: { roles: [admin] } }
    next: done
  - step: done
`;
  expect((await http(a.url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await a?.close();
});

describe('svc run --wait', () => {
  it('says what a step waits for (and how to send its signal), and when the execution is paused and resumed', async () => {
    const p = spawnSvc(['run', 'run_notes/approve', '--wait'], { SVC_SERVER_URL: a.url });
    await waitForOutput(p, 'step approve started', 15_000);
    const id = /execution (\d+) started/.exec(p.output())?.[1];
    expect(p.output()).toMatch(/\] step cool waits until \d{4}-\d\d-\d\dT[\d:.]+Z\n/);
    await waitForOutput(p, `: svc signal ${id} approval --data JSON\n`, 10_000);
    expect(p.output()).toMatch(/\] step approve waits for signal approval \(roles admin\), times out at \d{4}-[\d\-T:.]+Z: svc signal \d+ approval --data JSON\n/);
    expect((await http(a.url, 'POST', `/api/executions/${id}/pause`, { reason: 'lunch' })).status).toBe(200);
    await waitForOutput(p, `] paused by local (lunch): no step runs until it is resumed (svc resume ${id})\n`, 10_000);
    expect((await http(a.url, 'POST', `/api/executions/${id}/resume`, {})).status).toBe(200);
    await waitForOutput(p, '] resumed by local\n', 10_000);
    expect((await http(a.url, 'POST', `/api/executions/${id}/signals/approval`, { payload: { approved: true } })).status).toBe(202);
    expect(await withTimeout(p.exited, 15_000, 'svc run --wait')).toBe(0);
    expect(p.output()).toMatch(/step approve ok \(2\/3\)\n.*step done started/s);
  });
});
