import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { executionApi } from './execution-api.ts';
import { freePort } from './ports.ts';
import { waitForOutput } from './process.ts';
import type { ServerProcesses } from './server-processes.ts';
import { until } from './until.ts';

/**
 * On `processes` (SVC_AUTO_RESUME_MODE=restart): registers `path`, two shell steps (`first`, then
 * `second` held until released), SIGKILLs the server and its worker while `second` runs, and starts
 * the next server on the same port, which restarts the execution: the one restarted (`id`) and its
 * successor (completed, `first` replayed), at `base`.
 */
export async function restartedByAutoResume(processes: ServerProcesses, path: string): Promise<{ base: string; id: number; successor: number }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const hold = join(processes.dir, 'hold');
  await writeFile(hold, '');
  const first = (await processes.server({}, port)).proc;
  const api = executionApi(base);
  await api.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: two, path: ${path} }
workflow:
  - step: first
    tool: { name: count, kind: shell, command: 'echo counted' }
    next: second
  - step: second
    tool: { name: wait, kind: shell, env: { HOLD: "${hold}", STOP: "${processes.stopFile}" }, command: 'while [ -e "$HOLD" ] && [ ! -e "$STOP" ]; do sleep 0.1; done; echo done' }
`);
  const doomed = await processes.worker(base, 1);
  const id = await api.run(path);
  const claimed = async () => (await processes.db.query(`SELECT step FROM core.command WHERE execution_id = $1 AND status IN ('CLAIMED', 'RUNNING')`, [id])).rows[0]?.step;
  await until('the second step to be claimed', async () => ((await claimed()) === 'second' ? true : undefined), 30_000);
  // The server and its worker die mid-step; the next server restarts the execution.
  first.kill('SIGKILL');
  await first.exited;
  await doomed.kill();
  await new Promise((r) => setTimeout(r, 1_500));
  const server = (await processes.server({}, port)).proc;
  await unlink(hold);
  await processes.worker(base, 1);
  await waitForOutput(server, 'auto-resume handled', 60_000);
  const successor = Number((await processes.db.query(`SELECT execution_id FROM core.event WHERE event_id = 1 AND context->>'resumed_from' = $1`, [String(id)])).rows[0].execution_id);
  expect(await api.wait(successor, 60_000)).toMatchObject({ status: 'completed' });
  return { base, id, successor };
}
