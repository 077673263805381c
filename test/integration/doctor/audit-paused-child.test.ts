// svc doctor detect called the parent of a paused child stuck: a parent waits for its `playbook`
// task's child, and the check took only a running child for progress, so a child an operator
// paused (or one queued behind its concurrency limit) made its parent 'running for over N min with
// no progress', critical, with `svc cancel <parent>` as the next step, which cancels the paused
// child along. The child is judged itself: paused waits on purpose, queued as its limit says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';
import { runDoctor, startSvc, type StartedSvc } from './run-doctor.ts';

// One child at a time (its inline limit), each waiting an hour on a timer: the first runs, the next is queued.
const CHILD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: child, path: audit/child }
concurrency: { limit: 1 }
workflow:
  - step: start
    wait: { for: 1h }
`;
const PARENT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: audit/parent }
workflow:
  - step: start
    tool: { name: c, kind: playbook, path: audit/child }
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

/** Starts the parent playbook; resolves with its id and its child's once the child has a status. */
async function parentAndChild(status: string): Promise<{ parent: number; child: number }> {
  const parent: number = (await http(url, 'POST', '/api/run/playbook', { path: 'audit/parent' })).body.execution_id;
  const child = await until(`the child of ${parent} ${status}`, async () => {
    const c = (await http(url, 'GET', `/api/executions?parent=${parent}`)).body.executions[0];
    return c?.status === status ? (c.execution_id as number) : undefined;
  });
  return { parent, child };
}

describe('svc doctor detect and a parent whose child waits', () => {
  it('lists neither the parent of a paused child nor that of a queued one as stuck', async () => {
    for (const content of [CHILD, PARENT]) expect((await http(url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
    const paused = await parentAndChild('running');
    expect((await http(url, 'POST', `/api/executions/${paused.child}/pause`, {})).status).toBe(200);
    const queued = await parentAndChild('queued');
    // Past the threshold for both parents (0.02 min: 1.2 s).
    await new Promise((r) => setTimeout(r, 2_500));
    const run = await runDoctor(['detect', '--server', url, '--json', '--stuck-minutes', '0.02']);
    const check = run.json().data.checks.stuck_executions;
    const stuck = check.items.map((i: { execution_id: number }) => i.execution_id);
    expect(stuck).not.toContain(paused.parent);
    expect(stuck).not.toContain(queued.parent);
    expect(check).toMatchObject({ severity: 'ok', count: 0 });
    // The queued child is seen for what it is: waiting on its limit.
    expect(check.waiting.items).toContainEqual(expect.objectContaining({ execution_id: queued.child, waits_for: 'limit' }));
    expect(run.code, run.stdout).toBe(0);
  });
});
