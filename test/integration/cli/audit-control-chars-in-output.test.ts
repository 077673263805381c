// Text that came from data reached the readable output raw: a limit key rendered from a
// workload ("acme\n\x1b[31mRED\x1b[0m") split `svc limits show`'s KEY row in two and coloured the
// terminal; a cancel reason with ESC sequences went as they were into `svc logs` and `svc status`
// (piped too: "no ANSI codes when stdout is not a terminal"). Control characters in a table cell
// or a detail are now written as escapes (\n, \u001b): one row per key, nothing a terminal acts on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

// An admitted execution holds a slot of its tenant's key until it is cancelled.
const HOLD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: hold, path: cli/control-chars/hold }
inputs:
  tenant: { type: string }
concurrency: { limit: cli-control-chars, key: "{{ workload.tenant }}" }
workflow:
  - step: hold
    wait: { signal: go, timeout: 1h }
`;

const ESC = '\x1b';
const KEY = `acme\n${ESC}[31mRED${ESC}[0m\tx`;

let t: TestApp;
let env: Record<string, string>;
beforeAll(async () => {
  t = await startTestApp();
  env = { SVC_SERVER_URL: t.url };
  await executionApi(t.url).register(HOLD);
});
afterAll(async () => {
  await t?.close();
});

describe('control characters from data in the readable output', () => {
  it('are escaped in svc limits show, svc logs and svc status; --json keeps them as they are', async () => {
    expect((await runSvc(['limits', 'set', 'cli-control-chars', '--concurrency', '5'], env)).code).toBe(0);
    const id = await executionApi(t.url).run('cli/control-chars/hold', { tenant: KEY });
    await until('the hold step waits', async () => ((await (await fetch(`${t.url}/api/executions/${id}`)).json()) as { waits_count?: number }).waits_count === 1, 20_000, 100);

    const shown = await runSvc(['limits', 'show', 'cli-control-chars'], env);
    expect(shown, shown.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).not.toContain(ESC);
    const rows = shown.stdout.trimEnd().split('\n');
    expect(rows.at(-2)).toMatch(/^KEY\s+RUNNING/);
    expect(rows.at(-1)).toMatch(/^acme\\n\\u001b\[31mRED\\u001b\[0m\\tx\s+1\s+0\s+0\s+/);
    const json = JSON.parse((await runSvc(['limits', 'show', 'cli-control-chars', '--json'], env)).stdout);
    expect(json.key_list[0].key).toBe(KEY);

    const reason = `stop ${ESC}[2J${ESC}[31mnow${ESC}[0m\rdone\u0085`;
    expect((await runSvc(['cancel', String(id), '--reason', reason], env)).code).toBe(0);
    const logs = await runSvc(['logs', String(id)], env);
    expect(logs, logs.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(logs.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(logs.stdout).toContain('execution.cancelled  -                 by local: stop \\u001b[2J\\u001b[31mnow\\u001b[0m\\rdone\\u0085\n');
    const status = await runSvc(['status', String(id)], env);
    expect(status, status.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(status.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(status.stdout).toContain('  error     cancelled: stop \\u001b[2J');
    const events = JSON.parse((await runSvc(['logs', String(id), '--json'], env)).stdout).events;
    expect(events.at(-1)).toMatchObject({ event_type: 'execution.cancelled' });
    expect(JSON.stringify(events)).toContain(JSON.stringify(reason).slice(1, -1));

    // svc run --wait says how the execution ended: the reason, escaped as well.
    const waiting = runSvc(['run', 'cli/control-chars/hold', '--set', 'tenant=beta', '--wait'], env);
    const second = await until('the second execution waits', async () => {
      const list = (await (await fetch(`${t.url}/api/executions?status=running`)).json()) as { executions: { execution_id: number }[] };
      return list.executions.find((e) => e.execution_id !== id)?.execution_id;
    }, 20_000, 100);
    await until('it holds its slot', async () => ((await (await fetch(`${t.url}/api/executions/${second}`)).json()) as { waits_count?: number }).waits_count === 1, 20_000, 100);
    expect((await runSvc(['cancel', String(second), '--reason', reason], env)).code).toBe(0);
    const ran = await waiting;
    expect(ran.code, ran.stderr).toBe(1);
    expect(ran.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(ran.stdout).toContain('error: stop \\u001b[2J\\u001b[31mnow\\u001b[0m\\rdone\\u0085\n');
  });
});
