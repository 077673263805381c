import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('svc worker', () => {
  it('drains on SIGTERM: no new claims, the running command finishes and reports, then it exits 0', async () => {
    await http(t.url, 'POST', '/api/catalog/playbook', {
      content: 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: d, path: drain/d }\nworkflow:\n  - step: start\n    tool: { name: s, kind: shell, command: "sleep 1; echo drained" }\n',
    });
    const worker = spawnSvc(['worker', '--server', t.url, '--concurrency', '1'], {});
    const first = (await http(t.url, 'POST', '/api/run/playbook', { path: 'drain/d' })).body.execution_id;
    const second = (await http(t.url, 'POST', '/api/run/playbook', { path: 'drain/d' })).body.execution_id;
    // Wait until the first command is claimed, then ask the worker to stop.
    for (let i = 0; i < 200; i++) {
      const ev = (await http(t.url, 'GET', `/api/executions/${first}`)).body;
      const pools = (await http(t.url, 'GET', '/api/worker/pools')).body.pools;
      if (pools.length && ev.status === 'running') {
        const cmds = await t.deps.db.query<{ status: string }>(`SELECT status FROM core.command WHERE execution_id = $1`, [first]);
        if (cmds.rows[0]?.status === 'CLAIMED' || cmds.rows[0]?.status === 'RUNNING') break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    worker.kill('SIGTERM');
    expect(await withTimeout(worker.exited, 15_000, 'worker drain')).toBe(0);
    const done = (await http(t.url, 'GET', `/api/executions/${first}`)).body;
    expect(done.status).toBe('completed');
    expect(done.result.stdout).toBe('drained\n');
    // The second was never claimed by the draining worker.
    const other = await t.deps.db.query<{ status: string }>(`SELECT status FROM core.command WHERE execution_id = $1`, [second]);
    expect(other.rows[0].status).toBe('PENDING');
    const pools = (await http(t.url, 'GET', '/api/worker/pools')).body.pools;
    expect(pools[0].status).toBe('stopped');
  });
});
