import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';

// A pool stopped while its tasks run drains: it waits for them, minutes maybe. It said
// `SIGTERM: stopping…` and then nothing until it exited, so the person (or the journal) could
// not tell what it waited for, or whether it hung.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('svc worker drain', () => {
  it('says which commands it waits for, and since when, as soon as the stop is asked', async () => {
    await http(t.url, 'POST', '/api/catalog/playbook', {
      content: 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: d, path: drainsay/d }\nworkflow:\n  - step: nap\n    tool: { name: s, kind: shell, command: "sleep 3; echo drained" }\n',
    });
    const worker = spawnSvc(['worker', '--server', t.url, '--concurrency', '1'], {});
    const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'drainsay/d' })).body.execution_id;
    for (let i = 0; i < 400; i++) {
      const cmds = await t.deps.db.query<{ status: string }>(`SELECT status FROM core.command WHERE execution_id = $1`, [id]);
      if (cmds.rows[0]?.status === 'CLAIMED' || cmds.rows[0]?.status === 'RUNNING') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 300)); // claimed is started at once: one slot, nothing else
    worker.kill('SIGTERM');
    // Said while the task still runs (it has about 3 s left), not once it is over.
    const t0 = Date.now();
    while (!worker.output().includes('draining:') && Date.now() - t0 < 2_000) await new Promise((r) => setTimeout(r, 25));
    const said = worker.output();
    expect(said).toMatch(new RegExp(`draining: 1 command still running: execution ${id} step nap \\(running \\d+\\.\\ds\\); a second SIGTERM exits now, cutting them short`));
    expect(await withTimeout(worker.exited, 15_000, 'worker drain')).toBe(0);
    expect((await http(t.url, 'GET', `/api/executions/${id}`)).body.status).toBe('completed');
  });
});
