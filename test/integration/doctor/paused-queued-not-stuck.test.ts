// A queued execution an operator paused (docs/flow-control.md, "Pausing a queued execution")
// waits on purpose, as a paused running one does: svc doctor detect does not list it as stuck,
// though it made no progress past the threshold and its key's holder is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { runDoctor, startSvc, type StartedSvc } from './run-doctor.ts';

// One at a time (its inline limit), each waiting an hour on a timer: the first runs, the next is queued.
const LIMITED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: limited, path: audit/paused-queued }
concurrency: { limit: 1 }
workflow:
  - step: start
    wait: { for: 1h }
`;

let svc: StartedSvc | undefined;
let url: string;

beforeAll(async () => {
  svc = await startSvc();
  url = svc.url;
}, 90_000);
afterAll(async () => {
  await svc?.stop();
});

const start = async (): Promise<number> => (await http(url, 'POST', '/api/run/playbook', { path: 'audit/paused-queued' })).body.execution_id;
const statusOf = async (id: number): Promise<string> => (await http(url, 'GET', `/api/executions/${id}`)).body.status;

describe('svc doctor detect and a paused queued execution', () => {
  it('does not list it as stuck', async () => {
    expect((await http(url, 'POST', '/api/catalog/playbook', { content: LIMITED })).status).toBe(201);
    const holder = await start();
    await expect.poll(() => statusOf(holder), { timeout: 15_000 }).toBe('running');
    const queued = await start();
    expect(await statusOf(queued)).toBe('queued');
    expect((await http(url, 'POST', `/api/executions/${queued}/pause`, {})).status).toBe(200);
    // Its key's holder ends: a queued one would be admitted now; the paused one waits for its resume.
    expect((await http(url, 'POST', `/api/executions/${holder}/cancel`, {})).status).toBe(200);
    // Past the threshold (0.02 min: 1.2 s).
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await statusOf(queued)).toBe('paused');
    const run = await runDoctor(['detect', '--server', url, '--json', '--stuck-minutes', '0.02']);
    const check = run.json().data.checks.stuck_executions;
    expect(check.items.map((i: { execution_id: number }) => i.execution_id)).not.toContain(queued);
    expect(check).toMatchObject({ severity: 'ok', count: 0 });
    expect(run.code, run.stdout).toBe(0);
    expect((await http(url, 'POST', `/api/executions/${queued}/cancel`, {})).status).toBe(200);
  });
});
