// svc doctor detect runs its detection playbooks on the server's own workers. Started at the
// default priority, they waited behind every command already queued: with the workers busy on a
// backlog (when an operator most wants to look) detect timed out and exited 3, 'no result within
// N s', as if no worker ran. They are claimed ahead of the queue now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { runDoctor, startSvc, type StartedSvc } from './run-doctor.ts';

// Each queued command holds the one worker slot this long; the backlog outlasts detect's timeout.
const BACKLOG = 40;
const TASK_SECONDS = 0.5;
const DETECT_TIMEOUT_SECONDS = 8;
const SLOW = `apiVersion: svc/v1
kind: Playbook
metadata: { name: slow, path: audit/slow }
workflow:
  - step: start
    tool: { name: s, kind: postgres, read_only: true, command: "SELECT pg_sleep(${TASK_SECONDS})" }
`;

let svc: StartedSvc | undefined;
let url: string;

beforeAll(async () => {
  // One worker slot.
  svc = await startSvc({ SVC_WORKER_CONCURRENCY: '1' });
  url = svc.url;
}, 90_000);
afterAll(async () => {
  await svc?.stop();
});

describe('svc doctor detect while the workers work through a backlog', () => {
  it('gets its results ahead of the queued commands', async () => {
    expect((await http(url, 'POST', '/api/catalog/playbook', { content: SLOW })).status).toBe(201);
    for (let i = 0; i < BACKLOG; i++) expect((await http(url, 'POST', '/api/run/playbook', { path: 'audit/slow' })).status).toBe(200);
    const run = await runDoctor(['detect', '--server', url, '--timeout-seconds', String(DETECT_TIMEOUT_SECONDS), '--json']);
    const checks: Record<string, { severity: string }> = run.json().data.checks;
    expect(Object.values(checks).map((c) => c.severity), run.stdout).not.toContain('error');
    expect(run.code).toBe(0);
    // The backlog was still there: detection did not just outwait it.
    const running = await http(url, 'GET', '/api/executions?status=running&path=audit/slow');
    expect(running.body.count ?? running.body.executions.length).toBeGreaterThan(0);
  }, 90_000);
});
