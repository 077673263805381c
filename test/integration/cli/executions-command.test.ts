// `svc list|status|logs|cancel|pause|resume|retry|signal` as a person and a program use them,
// against a real server with real workers, each run as a real process: the tables and --json, the
// filters and paging of the list, the timeline with task results and errors, following a running
// execution until it is cancelled, a retry from the failed step, a step waiting for a signal (its
// wait shown, a wrong signal refused, a repeat with the same key the same signal), pause and
// resume, and the exit codes (not found 4, conflict 5, not allowed 6, usage 2, unreachable 3).
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { NODE24, ROOT, runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const TWO_STEPS = `apiVersion: svc/v1
kind: Playbook
metadata: { name: two, path: cli/exec/two }
workflow:
  - step: first
    tool: { name: hello, kind: http, url: "{{ workload.base }}/echo?said=hello" }
    next: second
  - step: second
    tool: { name: broken, kind: http, url: "{{ workload.base }}/status/500" }
`;
const SLOW = `apiVersion: svc/v1
kind: Playbook
metadata: { name: slow, path: cli/other/slow }
workflow:
  - step: sleep
    tool: { name: wait, kind: http, url: "{{ workload.base }}/delay/20000" }
`;

const GATE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gate, path: cli/gate/plain }
workflow:
  - step: hold
    wait: { signal: go, timeout: 1h }
    next: after
  - step: after
    tool: { name: done, kind: noop }
`;
const ADMIN_GATE = GATE.replace('cli/gate/plain', 'cli/gate/admin').replace('timeout: 1h }', 'timeout: 1h, approval: { roles: [admin] } }');

let s: TestStack;
let target: HttpTarget;
let env: Record<string, string>;
/** Executions of cli/exec/two (failed at `second`), oldest first. */
const failed: number[] = [];

beforeAll(async () => {
  s = await startTestStack();
  target = await startHttpTarget();
  env = { SVC_SERVER_URL: s.url };
  await s.register(TWO_STEPS);
  await s.register(SLOW);
  await s.register(GATE);
  for (let i = 0; i < 3; i++) {
    const id = await s.run('cli/exec/two', { base: target.url });
    await s.wait(id);
    failed.push(id);
  }
});
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const svc = (args: string[], extra: Record<string, string> = {}) => runSvc(args, { ...env, ...extra });
const lines = (text: string) => text.trimEnd().split('\n');

/** `svc <args>` as a process whose output can be read while it runs. */
function spawnSvc(args: string[]) {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += String(c)));
  proc.stderr.on('data', (c) => (stderr += String(c)));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((ok) => proc.on('close', (code) => ok({ code, stdout, stderr })));
  return { exited, stdout: () => stdout, kill: (signal: NodeJS.Signals) => proc.kill(signal) };
}

async function startSlow(): Promise<number> {
  const id = await s.run('cli/other/slow', { base: target.url });
  await until('the slow step issued', async () => (await s.events(id)).some((e) => e.event_type === 'command.issued'));
  return id;
}

describe('svc list', () => {
  it('lists newest first as a table and as the API answer; filters by status, path prefix and since; pages by cursor', async () => {
    const table = await svc(['list', '--path-prefix', 'cli/exec/']);
    expect(table, table.stderr).toMatchObject({ code: 0, stderr: '' });
    const [header, ...rows] = lines(table.stdout);
    expect(header).toMatch(/^ID\s+PATH\s+STATUS\s+STARTED\s+RUN TIME\s+PROGRESS$/);
    expect(rows.map((r) => Number(r.split(/\s+/)[0]))).toEqual([...failed].reverse());
    expect(rows[0]).toMatch(/^\d+\s+cli\/exec\/two\s+failed\s+\d{4}-\d\d-\d\dT[\d:.]+Z \([\d.ms]+ ago\)\s+\d+(ms|\.\d{3}s)\s+50%$/);

    const json = await svc(['list', '--json', '--status', 'failed']);
    expect(json.code).toBe(0);
    const answer = JSON.parse(json.stdout);
    expect(answer).toMatchObject({ count: 3, next_cursor: null, counts: { failed: 3 } });
    expect(answer.executions.map((e: { execution_id: number }) => e.execution_id)).toEqual([...failed].reverse());
    expect((await svc(['list', '--status', 'completed'])).stdout).toBe('no executions\n');
    expect((await svc(['list', '--path-prefix', 'nothing/'])).stdout).toBe('no executions\n');

    // --since: a duration back from now, or an ISO time.
    expect(lines((await svc(['list', '--since', '1h'])).stdout)).toHaveLength(4);
    expect((await svc(['list', '--since', new Date(Date.now() + 60_000).toISOString()])).stdout).toBe('no executions\n');
    expect(lines((await svc(['list', '--since', '2020-01-01'])).stdout)).toHaveLength(4);

    // Two to a page: the line under the table gives the cursor of the next.
    const page1 = await svc(['list', '--limit', '2']);
    const cursor = /^more: --cursor (\S+)$/.exec(lines(page1.stdout).at(-1) ?? '')?.[1];
    expect(cursor, page1.stdout).toBeDefined();
    const page2 = await svc(['list', '--limit', '2', '--cursor', cursor ?? '']);
    expect(lines(page2.stdout).slice(1).map((r) => Number(r.split(/\s+/)[0]))).toEqual([failed[0]]);
  });
});

describe('svc status', () => {
  it("shows the execution, its error and each step's status; --json is the API's answer", async () => {
    const id = failed[0];
    const shown = await svc(['status', String(id)]);
    expect(shown, shown.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toMatch(new RegExp(`^execution ${id} cli/exec/two\\n  status    failed\\n  started   \\S+ \\(.+ ago\\)\\n  finished  \\S+ \\(.+ ago\\), after \\S+\\n  progress  50%\\n  error     http_status: .*500.*\\n`));
    expect(lines(shown.stdout).slice(-3)).toEqual([
      expect.stringMatching(/^STEP\s+STATUS\s+DETAIL$/),
      expect.stringMatching(/^first\s+completed\s+ok$/),
      expect.stringMatching(/^second\s+failed\s+error: http_status: .*500/),
    ]);
    const json = await svc(['status', String(id), '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await http(s.url, 'GET', `/api/executions/${id}`)).body);
  });
});

describe('svc logs', () => {
  it('prints the timeline with times, gaps and task results and errors; --json has every event', async () => {
    const id = failed[0];
    const shown = await svc(['logs', String(id)]);
    expect(shown, shown.stderr).toMatchObject({ code: 0, stderr: '' });
    const [title, header, ...rows] = lines(shown.stdout);
    expect(title).toBe(`execution ${id} cli/exec/two: failed`);
    expect(header).toMatch(/^ID\s+AT\s+GAP\s+EVENT\s+STEP\s+DETAIL$/);
    const events = await s.events(id);
    expect(rows).toHaveLength(events.length);
    expect(rows[0]).toMatch(/^1\s+\+0ms\s+-\s+execution\.started\s+-\s+by local$/);
    const row = (type: string, step: string) => rows.find((r) => new RegExp(`^\\d+\\s+\\+\\S+\\s+\\+\\S+\\s+${type.replace('.', '\\.')}\\s+${step}\\s`).test(r));
    // A task's result (the echo of its request), bounded; its error; the step's outcome.
    expect(row('call.done', 'first')).toMatch(/\shello \(http, \d+ms\)$/);
    expect(row('command.completed', 'first')).toMatch(/\shello: \{.*"said":"hello".*…$/);
    expect(row('command.completed', 'first')!.length).toBeLessThan(220);
    expect(row('call.error', 'second')).toMatch(/broken \(http, \d+ms\): http_status: .*500/);
    expect(row('command.failed', 'second')).toMatch(/\sbroken: http_status: .*500/);
    expect(row('step.exit', 'first')).toMatch(/\s+ok$/);

    const json = await svc(['logs', String(id), '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ execution_id: id, events });
  });

  it('--follow prints events as they come and ends when the execution does', async () => {
    const id = await startSlow();
    const follow = spawnSvc(['logs', String(id), '--follow']);
    await until('the first lines', () => follow.stdout().includes('command.issued'));
    expect(follow.stdout()).toMatch(new RegExp(`^execution ${id} cli/other/slow: running \\(following; Ctrl-C stops\\)\\nID`));
    const cancelled = await svc(['cancel', String(id), '--reason', 'enough waiting']);
    expect(cancelled, cancelled.stderr).toMatchObject({ code: 0, stdout: `execution ${id} cancelled\n` });
    const done = await follow.exited;
    expect(done, done.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(done.stdout).toMatch(/execution\.cancelled\s+-\s+by \S+: enough waiting\n/);
    expect(done.stdout).toMatch(new RegExp(`\\nexecution ${id} cancelled\\n$`));

    // The worker learns of the cancel from its next heartbeat and reports its aborted task then:
    // stored after the end, as late (docs/architecture.md, "Fencing"). Compared once it is in.
    await until('the late report', async () => (await s.events(id)).some((e) => e.event_type === 'command.failed' && e.context?.late === true));

    // --json --follow of an execution that has ended: one event a line, every event.
    const jsonl = await svc(['logs', String(id), '--follow', '--json']);
    expect(jsonl.code).toBe(0);
    expect(lines(jsonl.stdout).map((l) => JSON.parse(l).event_id)).toEqual((await s.events(id)).map((e) => e.event_id));
  });

  it('Ctrl-C stops following (exit 130) and leaves the execution running', async () => {
    const id = await startSlow();
    const follow = spawnSvc(['logs', String(id), '-f']);
    await until('the first lines', () => follow.stdout().includes('command.issued'));
    follow.kill('SIGINT');
    expect((await follow.exited).code).toBe(130);
    expect((await http(s.url, 'GET', `/api/executions/${id}`)).body.status).toBe('running');
    expect((await svc(['cancel', String(id)])).code).toBe(0);
  });
});

describe('svc cancel and retry', () => {
  it('cancels a running execution; a finished one is a conflict (exit 5); an unknown one is not found (exit 4)', async () => {
    const id = await startSlow();
    const cancelled = await svc(['cancel', String(id), '--json', '--no-cascade']);
    expect(cancelled, cancelled.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ status: 'cancelled', execution_id: id });
    const again = await svc(['cancel', String(id)]);
    expect(again).toMatchObject({ code: 5, stdout: `execution ${id} had already finished (cancelled): nothing cancelled\n` });
    const unknown = await svc(['cancel', '999999']);
    expect(unknown).toMatchObject({ code: 4, stdout: '', stderr: 'svc cancel: POST /api/executions/999999/cancel: HTTP 404 execution 999999 not found\n' });
    expect((await svc(['status', '999999'])).code).toBe(4);
    expect((await svc(['logs', '999999'])).code).toBe(4);
  });

  it('retries a failed execution from its failed step, or from one named; a running one is a conflict (exit 5)', async () => {
    const retried = await svc(['retry', String(failed[1])]);
    expect(retried, retried.stderr).toMatchObject({ code: 0, stderr: '' });
    const newId = Number(new RegExp(`^execution (\\d+) started: a retry of ${failed[1]} from step second \\(replayed: first\\)\\n$`).exec(retried.stdout)?.[1]);
    expect(newId).toBeGreaterThan(0);
    await s.wait(newId);
    expect((await svc(['status', String(newId)])).stdout).toContain(`  retry of  ${failed[1]}\n`);
    expect((await svc(['status', String(failed[1])])).stdout).toContain(`  retried as  ${newId}\n`);
    expect((await svc(['logs', String(newId)])).stdout).toMatch(new RegExp(`execution\\.started\\s+-\\s+by local, retry of ${failed[1]} from step second\\n`));

    const fromFirst = await svc(['retry', String(failed[2]), '--from', 'first', '--json']);
    expect(fromFirst.code).toBe(0);
    expect(JSON.parse(fromFirst.stdout)).toMatchObject({ retry_of: failed[2], from_step: 'first', replayed: [] });

    // The same key again is the same retry: its execution, nothing started.
    const keyed = await svc(['retry', String(failed[2]), '--from', 'first', '--idempotency-key', 'cli-retry-1', '--json']);
    const again = await svc(['retry', String(failed[2]), '--from', 'first', '--idempotency-key', 'cli-retry-1', '--json']);
    expect([keyed.code, again.code], keyed.stderr + again.stderr).toEqual([0, 0]);
    expect(JSON.parse(again.stdout).execution_id).toBe(JSON.parse(keyed.stdout).execution_id);
    expect(JSON.parse(keyed.stdout).execution_id).not.toBe(JSON.parse(fromFirst.stdout).execution_id);

    const noStep = await svc(['retry', String(failed[2]), '--from', 'nope']);
    expect(noStep.code).toBe(1);
    expect(noStep.stderr).toMatch(/^svc retry: POST \/api\/executions\/\d+\/retry: HTTP 422 playbook cli\/exec\/two has no step nope/);

    const id = await startSlow();
    const running = await svc(['retry', String(id)]);
    expect(running).toMatchObject({ code: 5, stderr: `svc retry: POST /api/executions/${id}/retry: HTTP 409 execution ${id} is running: retry it once it has finished\n` });
    expect((await svc(['cancel', String(id)])).code).toBe(0);
  });
});

/** Starts a playbook whose first step waits for a signal; returns once it waits. */
async function startWaiting(url: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  const started = await http(url, 'POST', '/api/run/playbook', { path }, headers);
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const id: number = started.body.execution_id;
  await until('the step waits', async () => (await http(url, 'GET', `/api/executions/${id}`, undefined, headers)).body.waits?.length === 1);
  return id;
}

describe('svc signal, pause and resume', () => {
  it('shows what a step waits for; a signal none waits for is a conflict (exit 5); the same idempotency key is the same signal', async () => {
    const id = await startWaiting(s.url, 'cli/gate/plain');
    const shown = await svc(['status', String(id)]);
    expect(shown, shown.stderr).toMatchObject({ code: 0 });
    expect(shown.stdout).toContain('  status    running\n');
    expect(shown.stdout).toMatch(/\nhold\s+waiting\s+signal go, times out \d{4}-\d\d-\d\dT[\d:.]+Z \(in (59m\d\ds|1h00m)\), waiting since \d{4}-\d\d-\d\dT[\d:.]+Z \([\d.]+\w* ago\)\nafter\s+pending\s+-\n$/);
    expect(JSON.parse((await svc(['status', String(id), '--json'])).stdout).waits).toEqual([
      { step: 'hold', seq: expect.any(Number), kind: 'signal', signal: 'go', wake_at: expect.any(String), approval_roles: null, since: expect.any(String) },
    ]);

    const wrong = await svc(['signal', String(id), 'stop']);
    expect(wrong.code).toBe(5);
    expect(wrong.stderr).toMatch(new RegExp(`^svc signal: POST /api/executions/${id}/signals/stop: HTTP 409 `));

    const sent = await svc(['signal', String(id), 'go', '--data', '{"ok": true}', '--idempotency-key', 'cli-go-1']);
    expect(sent, sent.stderr).toMatchObject({ code: 0, stderr: '' });
    const eventId = Number(new RegExp(`^signal go delivered to step hold of execution ${id} \\(event (\\d+)\\)\\n$`).exec(sent.stdout)?.[1]);
    expect(eventId).toBeGreaterThan(0);
    const again = await svc(['signal', String(id), 'go', '--data', '{"ok": true}', '--idempotency-key', 'cli-go-1', '--json']);
    expect(again, again.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(again.stdout)).toEqual({ status: 'delivered', execution_id: id, signal: 'go', step: 'hold', event_id: eventId });

    expect((await s.wait(id)).status).toBe('completed');
    const logs = await svc(['logs', String(id)]);
    expect(logs.stdout).toMatch(new RegExp(`\\n${eventId}\\s+\\+\\S+\\s+\\+\\S+\\s+signal\\.received\\s+hold\\s+signal go by local: \\{"ok":true\\}\\n`));
    // Over: nothing waits any more.
    expect((await svc(['signal', String(id), 'go'])).code).toBe(5);
  });

  it('pauses a running execution and resumes it; each twice is a conflict (exit 5)', async () => {
    const id = await startWaiting(s.url, 'cli/gate/plain');
    const paused = await svc(['pause', String(id)]);
    expect(paused, paused.stderr).toMatchObject({ code: 0, stdout: `execution ${id} paused\n` });
    const twice = await svc(['pause', String(id)]);
    expect(twice.code).toBe(5);
    expect(twice.stderr).toMatch(/HTTP 409 .*paused/);
    expect((await svc(['status', String(id)])).stdout).toContain('  status    paused\n');
    const listed = await svc(['list', '--status', 'paused', '--json']);
    expect(JSON.parse(listed.stdout).executions.map((e: { execution_id: number }) => e.execution_id)).toEqual([id]);

    const resumed = await svc(['resume', String(id), '--json', '--reason', 'checked']);
    expect(resumed, resumed.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(resumed.stdout)).toEqual({ execution_id: id, status: 'running' });
    expect((await svc(['resume', String(id)])).code).toBe(5);
    expect((await svc(['signal', String(id), 'go'])).code).toBe(0);
    expect((await s.wait(id)).status).toBe('completed');
    const control = lines((await svc(['logs', String(id)])).stdout).filter((l) => /\sexecution\.(paused|resumed)\s/.test(l));
    expect(control).toEqual([expect.stringMatching(/\sexecution\.paused\s+-\s+by local$/), expect.stringMatching(/\sexecution\.resumed\s+-\s+by local: checked$/)]);
  });
});

describe('usage errors and an unreachable server', () => {
  it('exits 2 with the usage line for a bad command line, 3 when the server does not answer', async () => {
    const cases: [string[], RegExp][] = [
      [['list', 'extra'], /^svc list: unexpected arguments: extra\nusage: svc list /],
      [['list', '--status', 'sleeping'], /^svc list: --status expects one of queued, running, .*got "sleeping"\n/],
      [['list', '--since', 'yesterday'], /^svc list: --since expects an ISO 8601 time .* or a duration/],
      [['list', '--limit', '0'], /^svc list: --limit expects a positive integer/],
      [['list', '--follow'], /^svc list: --follow does not apply to list\n/],
      [['status'], /^svc status: status needs an execution ID\nusage: svc status ID/],
      [['status', 'abc'], /^svc status: the execution ID must be a positive integer, got "abc"/],
      [['logs', '1', '2'], /^svc logs: unexpected arguments: 2\n/],
      [['logs', '1', '--bogus'], /^svc logs: unknown option '--bogus'\n/],
      [['cancel', '1', '--cascade', '--no-cascade'], /^svc cancel: --cascade and --no-cascade exclude each other\n/],
      [['retry', '1', '--reason', 'x'], /^svc retry: --reason does not apply to retry\n/],
      [['signal', '1'], /^svc signal: signal needs the execution ID and the signal NAME\n/],
      [['signal', '1', 'go', '--data', '{'], /^svc signal: --data is not valid JSON/],
    ];
    for (const [args, stderr] of cases) {
      const r = await svc(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(stderr);
      expect(r.stdout).toBe('');
    }
    const down = await svc(['list'], { SVC_SERVER_URL: 'http://127.0.0.1:1' });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/^svc list: server unreachable: /);
    const help = await svc(['logs', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('svc logs ID [--follow] [--json] [--server URL]');
    expect(help.stdout).toContain('4 not found (404: no such execution)');
  });
});

describe('svc cancel against SVC_AUTH=token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_AUTH: 'token' });
  });
  afterAll(async () => t?.close());

  it('a viewer reads but may not cancel (exit 6); no token at all is not allowed either', async () => {
    const operator = await createApiToken(t.deps.db, 'ops', 'operator');
    const viewer = await createApiToken(t.deps.db, 'look', 'viewer');
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: SLOW }, bearer(operator))).status).toBe(201);
    const started = await http(t.url, 'POST', '/api/run/playbook', { path: 'cli/other/slow', payload: { base: target.url } }, bearer(operator));
    const id = String(started.body.execution_id);
    const as = (token: string) => ({ SVC_SERVER_URL: t.url, SVC_API_TOKEN: token });
    expect((await runSvc(['list'], { SVC_SERVER_URL: t.url })).code).toBe(6);
    expect((await runSvc(['status', id], as(viewer))).stdout).toContain('  status    running\n');
    const refused = await runSvc(['cancel', id], as(viewer));
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(new RegExp(`^svc cancel: POST /api/executions/${id}/cancel: HTTP 403 `));
    expect(await runSvc(['cancel', id], as(operator))).toMatchObject({ code: 0, stdout: `execution ${id} cancelled\n` });
  });

  it("a signal from a caller the step's approval roles exclude is not allowed (exit 6); an admin's is delivered", async () => {
    const admin = await createApiToken(t.deps.db, 'boss', 'admin');
    const operator = await createApiToken(t.deps.db, 'ops2', 'operator');
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: ADMIN_GATE }, bearer(admin))).status).toBe(201);
    const id = await startWaiting(t.url, 'cli/gate/admin', bearer(admin));
    const as = (token: string) => ({ SVC_SERVER_URL: t.url, SVC_API_TOKEN: token });
    const shown = await runSvc(['status', String(id)], as(operator));
    expect(shown.stdout).toMatch(/\nhold\s+waiting\s+signal go \(roles admin\), times out /);
    const refused = await runSvc(['signal', String(id), 'go'], as(operator));
    expect(refused.code, refused.stderr).toBe(6);
    expect(refused.stderr).toMatch(new RegExp(`^svc signal: POST /api/executions/${id}/signals/go: HTTP 403 `));
    const sent = await runSvc(['signal', String(id), 'go', '--data', '{"approved": true}'], as(admin));
    expect(sent, sent.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(`^signal go delivered to step hold of execution ${id} `) });
  });
});
