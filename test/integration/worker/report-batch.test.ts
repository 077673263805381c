import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

// Long enough for a finished shell task's events to reach the worker's report queue.
const SETTLE_MS = 500;

let s: TestStack;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-report-batch-'));
  // Its tasks wait for gate files the test creates on the host: unsandboxed.
  s = await startTestStack({ workers: 1, concurrency: 4, workerOptions: { shell: UNSANDBOXED_SHELL } });
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: gated, path: worker/gated }
workflow:
  - step: start
    tool:
      name: wait
      kind: shell
      command: 'while [ ! -e "{{ workload.gate }}" ]; do sleep 0.02; done; touch "{{ workload.done }}"; echo {{ workload.label }}'
`);
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: quick, path: worker/quick }
workflow:
  - step: start
    tool: { name: say, kind: shell, command: "echo quick" }
`);
});
afterAll(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});


async function claimedCommand(executionId: number): Promise<number | undefined> {
  const { rows } = await s.deps.db.query<{ command_id: string; status: string }>(`SELECT command_id, status FROM core.command WHERE execution_id = $1`, [executionId]);
  return rows[0]?.status === 'CLAIMED' ? Number(rows[0].command_id) : undefined;
}

describe('worker reports', () => {
  it('a batch refused because one execution is gone loses only that command', async () => {
    const file = (name: string) => join(dir, name);
    const start = (label: string, gate: string) => s.run('worker/gated', { gate: file(gate), done: file(`${label}.done`), label });
    // C's and D's reports will be held up on the server (a worker has two reports in flight), so
    // A's and B's finish while they are and go together in the next report.
    const c = await start('c', 'gate-c');
    const d = await start('d', 'gate-d');
    const a = await start('a', 'gate-ab');
    const b = await start('b', 'gate-ab');
    let commandA: number | undefined;
    await until(
      'all four are claimed',
      async () => Boolean((commandA = await claimedCommand(a)) && (await claimedCommand(b)) && (await claimedCommand(c)) && (await claimedCommand(d))),
      15_000,
    );

    // Holding C's and D's execution rows blocks their routings (the one write moves each row on).
    const locker = new pg.Client({ connectionString: s.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM core.execution WHERE execution_id = ANY($1::bigint[]) FOR UPDATE', [[c, d]]);
      writeFileSync(file('gate-c'), '');
      await until('C finishes', () => existsSync(file('c.done')), 10_000);
      await new Promise((r) => setTimeout(r, SETTLE_MS)); // C's report is now waiting on the row
      writeFileSync(file('gate-d'), '');
      await until('D finishes', () => existsSync(file('d.done')), 10_000);
      await new Promise((r) => setTimeout(r, SETTLE_MS)); // and D's, in the second report in flight
      writeFileSync(file('gate-ab'), '');
      await until('A and B finish', () => existsSync(file('a.done')) && existsSync(file('b.done')), 10_000);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      // A's execution disappears: a report naming it is refused as a whole (404).
      await s.deps.db.query('DELETE FROM core.event WHERE execution_id = $1', [a]);
      await s.deps.db.query('DELETE FROM core.command WHERE execution_id = $1', [a]);
      await s.deps.db.query('DELETE FROM core.execution WHERE execution_id = $1', [a]);
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }

    expect((await s.wait(c, 10_000)).status).toBe('completed');
    expect((await s.wait(d, 10_000)).status).toBe('completed');
    const finalB = await s.wait(b, 10_000);
    expect(finalB.status).toBe('completed');
    expect(finalB.result.stdout).toBe('b\n');
    // A and B really went in one report, which the server refused; then each went alone.
    const logs = s.logs.join('');
    expect(logs).toContain('report batch refused by the server; reporting each command alone');
    // A's own report, then the report_rejected failure sent instead: both refused (404), so it is dropped.
    // Logged when A's lone report comes back refused, which may be after B's report went through.
    await until('A is failed', () => s.logs.join('').includes(`report of command ${commandA} refused by the server; failing the command (report_rejected)`), 5_000);
    await until('the failure is refused too', () => s.logs.join('').includes(`report_rejected failure of command ${commandA} refused by the server too; dropped`), 5_000);
    // The dropped command's slot is free again and the worker keeps working.
    await until('slots are free', () => s.workers[0].running === 0, 5_000);
    const next = await s.run('worker/quick');
    expect((await s.wait(next, 10_000)).status).toBe('completed');
    expect((await http(s.url, 'GET', `/api/executions/${a}`)).status).toBe(404);
  });

  it('a second report goes out while the first is held up on the server', async () => {
    const file = (name: string) => join(dir, name);
    const slow = await s.run('worker/gated', { gate: file('gate-slow'), done: file('slow.done'), label: 'slow' });
    const fast = await s.run('worker/gated', { gate: file('gate-fast'), done: file('fast.done'), label: 'fast' });
    await until('both are claimed', async () => Boolean((await claimedCommand(slow)) && (await claimedCommand(fast))), 15_000);
    const locker = new pg.Client({ connectionString: s.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM core.execution WHERE execution_id = $1 FOR UPDATE', [slow]);
      writeFileSync(file('gate-slow'), '');
      await until('the slow one finishes', () => existsSync(file('slow.done')), 10_000);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      writeFileSync(file('gate-fast'), '');
      // Its report does not wait behind the held one.
      expect((await s.wait(fast, 10_000)).status).toBe('completed');
      expect((await http(s.url, 'GET', `/api/executions/${slow}`)).body.status).toBe('running');
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
    expect((await s.wait(slow, 10_000)).status).toBe('completed');
  });
});
