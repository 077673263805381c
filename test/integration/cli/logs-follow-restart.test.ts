// `svc logs --follow` through a server restart, as real processes: a `svc server`, stopped and
// started again on its port while an execution waits for a signal, and `svc logs ID --follow`
// following it. The follower says the server went away and came back, then prints the events it
// missed and the end (exit 0), as `svc run --wait` does; it used to exit 3 at the first failed poll.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const GATE = `apiVersion: svc/v1
metadata: { name: gate, path: cli/follow/gate }
workflow:
  - step: hold
    wait: { signal: go, timeout: 1h }
`;

let bed: ServerProcesses;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
}, 60_000);
afterAll(async () => {
  await bed?.close();
});

describe('svc logs --follow', () => {
  it('follows on through a server restart and prints the end', async () => {
    const port = await freePort();
    const first = await bed.server({}, port);
    expect((await http(first.base, 'POST', '/api/catalog/playbook', { content: GATE })).status).toBeLessThan(300);
    const started = await http(first.base, 'POST', '/api/run/playbook', { path: 'cli/follow/gate' });
    const id = Number(started.body.execution_id);
    const follower = spawnSvc(['logs', String(id), '--follow'], { SVC_SERVER_URL: first.base });
    await until('the wait shown', () => follower.output().includes('signal.awaited'));

    first.proc.kill('SIGTERM');
    await first.proc.exited;
    await until('the follower lost the server', () => follower.output().includes('still following'), 10_000);
    await sleep(1_000);
    const second = await bed.server({}, port);
    expect((await http(second.base, 'POST', `/api/executions/${id}/signals/go`, { payload: {} })).status).toBe(202);

    expect(await follower.exited).toBe(0);
    const text = follower.output();
    expect(text).toContain('server reachable again');
    expect(text).toMatch(/signal\.received\s+hold/);
    expect(text).toContain(`execution ${id} completed`);
  }, 90_000);
});
