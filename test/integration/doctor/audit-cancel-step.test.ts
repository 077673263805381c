// The doctor's next steps are commands to paste (docs/operations.md). The one it gives for a stuck
// execution, cancel it, must work as given where the server checks callers (SVC_AUTH=token) too:
// the doctor sends SVC_API_TOKEN (an operator's), and so must the step it prints for the operator.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKS } from '../../../src/doctor/detection-checks.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';

const T = { stuck_minutes: 30, pending_seconds: 300, worker_stale_seconds: 60, limit: 20 };
const at = '2026-11-28T10:00:00Z';
const WAITING = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: waits, path: audit/waits }\nworkflow:\n  - step: start\n    wait: { for: 1h }\n`;

let t: TestApp;
let operator: string;
beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
  operator = await createApiToken(t.deps.db, 'audit-operator', 'operator');
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: WAITING }, bearer(operator))).status).toBe(201);
});
afterAll(async () => t?.close());

/** Runs a step as a person pastes it into bash (its comment too), `svc` being this checkout's. */
function paste(step: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const command = step.replace(/^svc /, `${NODE24} ${ROOT}src/cli.ts `);
  const child = spawn('bash', ['-c', command], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += String(c)));
  child.stderr.on('data', (c) => (out += String(c)));
  return new Promise((ok) => child.on('close', (code) => ok({ code, out })));
}

const started = async (): Promise<number> => {
  const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/waits' }, bearer(operator));
  expect(r.status).toBe(200);
  return r.body.execution_id;
};
const status = async (id: number) => (await http(t.url, 'GET', `/api/executions/${id}`, undefined, bearer(operator))).body.status;

describe("the doctor's step that cancels a stuck execution", () => {
  it('cancels it when pasted with SVC_API_TOKEN, on a server that checks callers', async () => {
    const id = await started();
    const finding = CHECKS.stuck_executions.interpret(
      { rows: [{ count: 1, items: [{ execution_id: id, path: 'audit/waits', started_at: at, last_progress_at: at, idle_minutes: 95, reason: 'no_progress', waits_for: null, signal: null, limit_name: null, until: null }], waiting: 0, waiting_items: [] }] },
      T,
      t.url,
      1,
    );
    const step = finding!.next_steps.find((s) => s.includes(String(id)) && /cancel/.test(s.split('#')[0]));
    expect(step, JSON.stringify(finding!.next_steps)).toBeDefined();
    const pasted = await paste(step!, { SVC_API_TOKEN: operator });
    expect(pasted.code, pasted.out).toBe(0);
    expect(await status(id)).toBe('cancelled');
  });

});
