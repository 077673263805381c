// `svc logs` as a person reads it: a fixed 16-column STEP pushed the DETAIL of every line of a
// longer step name (fetch_customer_invoices_from_billing) out of its column, and the table read
// as two. The column now fits the steps: those of the log, and with --follow the playbook's
// (the steps still to come), in a terminal's columns (wide characters count two).
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { NODE24, ROOT, runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const LONG = 'fetch_customer_invoices_from_billing';
const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: cols, path: cli/audit/cols }
workflow:
  - step: hold
    wait: { signal: go, timeout: 1h }
    next: ${LONG}
  - step: ${LONG}
    tool: { name: fetch, kind: noop }
    next: 東京の請求書
  - step: 東京の請求書
    tool: { name: bill, kind: noop }
`;

let s: TestStack;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startTestStack();
  env = { SVC_SERVER_URL: s.url };
  await s.register(PLAYBOOK);
});
afterAll(async () => {
  await s?.close();
});

/** `svc <args>` as a process whose output can be read while it runs. */
function spawnSvc(args: string[]) {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += String(c)));
  proc.stderr.on('data', (c) => (stderr += String(c)));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((ok) => proc.on('close', (code) => ok({ code, stdout, stderr })));
  return { exited, stdout: () => stdout };
}

/** Columns of `text` in a terminal (the CJK here: two each). */
const columns = (text: string) => [...text].reduce((n, ch) => n + (/[\u3000-\u9fff]/.test(ch) ? 2 : 1), 0);

/** Every event line's DETAIL starts at the header's DETAIL column. */
function expectAligned(text: string): void {
  const lines = text.split('\n');
  const header = lines.findIndex((l) => l.startsWith('ID '));
  const at = lines[header].indexOf('DETAIL');
  const events = lines.slice(header + 1).filter((l) => /^\d+ /.test(l));
  expect(events.length).toBeGreaterThan(8);
  for (const l of events) {
    const cells = l.split(/ {2,}/);
    if (cells.length < 6) continue; // no detail (step.enter)
    const detail = cells.slice(5).join('  ');
    expect(columns(l.slice(0, l.length - detail.length)), l).toBe(at);
  }
}

it('svc logs, and svc logs --follow, keep DETAIL in its column beside a step name over 16 columns', async () => {
  const id = await s.run('cli/audit/cols', {});
  await until('the signal wait', async () => (await s.events(id)).some((e) => e.event_type === 'signal.awaited'));
  // Followed from before the long steps began: the column is sized for what comes.
  const follow = spawnSvc(['logs', String(id), '--follow']);
  await until('following', () => follow.stdout().includes('signal.awaited'));
  expect((await http(s.url, 'POST', `/api/executions/${id}/signals/go`, { payload: {} })).status).toBe(202);
  const followed = await follow.exited;
  expect(followed.code, followed.stderr).toBe(0);
  expect(followed.stdout).toContain(`step.exit            ${LONG}  ok`);
  expectAligned(followed.stdout);

  const shown = await runSvc(['logs', String(id)], env);
  expect(shown.code, shown.stderr).toBe(0);
  expectAligned(shown.stdout);
});
