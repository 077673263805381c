// The "Done when" of the execution engine issue: real playbooks end to end through real `svc worker`
// processes (HTTP only, as in production). Each test asserts the final status, the result and the
// event sequence; where parallel branches make the total order nondeterministic, the order within
// each branch and the multiset of the whole.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';
import { until } from '../../helpers/until.ts';

let s: WorkerStack;
let target: HttpTarget;
let dir: string;
let inFlight = 0;
let maxInFlight = 0;
// Long enough that three loop items surely overlap at the target, short enough to keep 20 items fast.
const SLOT_HOLD_MS = 60;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-features-'));
  target = await startHttpTarget(async (req, res) => {
    // /slot/<n>: holds the request a little and records how many overlap.
    const m = /^\/slot\/(\d+)/.exec(req.url ?? '');
    if (!m) return;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, SLOT_HOLD_MS + ((Number(m[1]) * 7) % 30)));
    inFlight--;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ item: Number(m[1]) }));
  });
  // The cancel test's shell tasks write pid files the test reads on the host: unsandboxed.
  s = await startWorkerStack({ workers: 2, concurrency: 4, serviceDbTasks: true, workerEnv: { SVC_SHELL_SANDBOX: 'off' } });
});
afterAll(async () => {
  // close() fails the file when a worker process does not drain and exit 0.
  await s?.close();
  await target?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `type` or `type:step`, the form exact sequence assertions read best in. */
const trace = (events: Json[]): string[] => events.map((e: Json) => (e.step ? `${e.event_type}:${e.step}` : e.event_type));

/**
 * What one worker command of a step writes, from its issue to its report (claims are logged with
 * the first report): a command whose task failed ends with command.failed.
 */
const command = (step: string, calls: ('call.attempt' | 'call.done' | 'call.error')[]): string[] => [
  `command.issued:${step}`,
  `command.claimed:${step}`,
  `command.started:${step}`,
  ...calls.map((c) => `${c}:${step}`),
  calls.includes('call.error') ? `command.failed:${step}` : `command.completed:${step}`,
];

/** A plain step whose single command runs `calls`. */
const stepRun = (step: string, calls: ('call.attempt' | 'call.done' | 'call.error')[] = ['call.done']): string[] => [`step.enter:${step}`, ...command(step, calls), `step.exit:${step}`];

const COMPLETED = ['workflow.completed', 'playbook.completed'];
const FAILED = ['workflow.failed', 'playbook.failed'];

async function runYaml(yaml: string, payload: Record<string, unknown> = {}) {
  const reg = await s.register(yaml);
  const id = await s.run(reg.path, payload);
  const final = await s.wait(id);
  return { id, final, events: await s.events(id) };
}

function only(events: Json[], type: string): Json {
  const found = events.filter((e: Json) => e.event_type === type);
  expect(found, type).toHaveLength(1);
  return found[0];
}


describe('http tasks', () => {
  it('retries 503 twice with backoff, then succeeds', async () => {
    const { id, final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: flaky, path: tests/http/flaky }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        url: "{{ workload.base }}/flaky?fail=2&key=run-{{ execution.id }}"
        retry: { attempts: 4, delay_seconds: 0.01, backoff: 2 }
`);
    expect(final).toMatchObject({ status: 'completed', progress: 100, error: null });
    expect(final.result).toMatchObject({ status: 200, body: { calls: 3 } });
    // Each attempt that failed and was retried is a call.attempt; the task's outcome is one call.done.
    expect(trace(events)).toEqual(['execution.started', ...stepRun('start', ['call.attempt', 'call.attempt', 'call.done']), ...COMPLETED]);
    expect(only(events, 'call.done').context).toMatchObject({ task: 'call', kind: 'http', attempts: 3 });
    expect(events.filter((e) => e.event_type === 'call.attempt').map((e) => [e.context.attempt, e.error.code, e.result.output.status])).toEqual([[1, 'http_status', 503], [2, 'http_status', 503]]);
    expect(target.requests.filter((r) => r.path === '/flaky' && r.query.key === `run-${id}`)).toHaveLength(3);
    expect(only(events, 'playbook.completed').result).toEqual(final.result);
  });

  it('fails the step and the execution on a 404 (no retry policy: one request)', async () => {
    const { id, final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: missing, path: tests/http/missing }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool: { name: get, kind: http, url: "{{ workload.base }}/status/404?run={{ execution.id }}" }
`);
    // Its only step failed it: no step done.
    expect(final).toMatchObject({ status: 'failed', progress: 0, result: null });
    expect(final.error).toEqual({ code: 'http_status', message: 'HTTP 404 Not Found', step: 'start' });
    expect(trace(events)).toEqual(['execution.started', ...stepRun('start', ['call.error']), ...FAILED]);
    expect(only(events, 'call.error').error).toEqual({ code: 'http_status', message: 'HTTP 404 Not Found' });
    // The failed task still carries what the target answered.
    expect(only(events, 'command.failed').result.tasks.get).toMatchObject({ status: 'error', data: { status: 404, body: { status: 404 } } });
    expect(only(events, 'command.failed').error).toEqual({ code: 'http_status', message: 'HTTP 404 Not Found', task: 'get' });
    expect(only(events, 'step.exit').context).toEqual({ status: 'error' });
    expect(only(events, 'playbook.failed').error).toEqual(final.error);
    expect(target.requests.filter((r) => r.path === '/status/404' && r.query.run === String(id))).toHaveLength(1);
  });

  it('recovers from the 404 through an arc on outcome.status, with set', async () => {
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: recover, path: tests/http/recover }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool: { name: get, kind: http, url: "{{ workload.base }}/status/404" }
    next:
      - { step: ok, when: "{{ outcome.status == 'ok' }}" }
      - { step: fallback, when: "{{ outcome.status == 'error' }}", set: { code: "{{ outcome.result.status }}" } }
  - step: ok
    tool: { name: x, kind: shell, command: "echo ok" }
  - step: fallback
    tool: { name: note, kind: shell, command: "echo recovered from {{ vars.code }}" }
`);
    expect(final).toMatchObject({ status: 'completed', progress: 100, error: null });
    expect(final.result).toEqual({ exit_code: 0, stdout: 'recovered from 404\n', stderr: '' });
    expect(trace(events)).toEqual(['execution.started', ...stepRun('start', ['call.error']), ...stepRun('fallback'), ...COMPLETED]);
  });
});

describe('postgres and shell tasks', () => {
  it('inserts with bind params (a quote in the data stays data) and selects them back', async () => {
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: pgtasks, path: tests/pg }
workload: { users: [ { id: 1, name: ada }, { id: 2, name: "o'brien; DROP TABLE users_t" } ] }
workflow:
  - step: start
    tool:
      - { name: create, kind: postgres, command: "CREATE TABLE public.users_t (id int primary key, name text)" }
    next: insert
  - step: insert
    loop: { in: "{{ workload.users }}", iterator: user }
    tool:
      - { name: ins, kind: postgres, command: "INSERT INTO public.users_t (id, name) VALUES ($1, $2)", params: ["{{ user.id }}", "{{ user.name }}"] }
    next: select
  - step: select
    tool:
      - { name: sel, kind: postgres, command: "SELECT id, name FROM public.users_t WHERE id >= $1 ORDER BY id", params: [1] }
`);
    expect(final).toMatchObject({ status: 'completed', progress: 100, error: null });
    expect(final.result).toEqual({ command: 'SELECT', row_count: 2, rows: [{ id: 1, name: 'ada' }, { id: 2, name: "o'brien; DROP TABLE users_t" }] });
    // A sequential loop: each item's command is issued only after the previous one completed.
    expect(trace(events)).toEqual([
      'execution.started',
      ...stepRun('start'),
      'step.enter:insert',
      'loop.item:insert',
      ...command('insert', ['call.done']),
      'loop.item:insert',
      ...command('insert', ['call.done']),
      'loop.done:insert',
      'step.exit:insert',
      ...stepRun('select'),
      ...COMPLETED,
    ]);
    expect(events.filter((e: Json) => e.event_type === 'loop.item').map((e: Json) => e.context.index)).toEqual([0, 1]);
    expect(events.find((e: Json) => e.event_type === 'step.exit' && e.step === 'insert').result).toEqual([
      { command: 'INSERT', row_count: 1, rows: [] },
      { command: 'INSERT', row_count: 1, rows: [] },
    ]);
    const { rows } = await s.deps.db.query(`SELECT id, name FROM public.users_t ORDER BY id`);
    expect(rows).toEqual(final.result.rows);
  });

  it('runs shell tasks in order within one command; later tasks see earlier ones', async () => {
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: sh, path: tests/shell }
workflow:
  - step: start
    tool:
      - { name: a, kind: shell, command: "printf 21" }
      - { name: b, kind: shell, command: "echo $(( {{ tasks.a.data.stdout }} * 2 )); echo note >&2" }
`);
    expect(final).toMatchObject({ status: 'completed', progress: 100, error: null });
    expect(final.result).toEqual({ exit_code: 0, stdout: '42\n', stderr: 'note\n' });
    expect(trace(events)).toEqual(['execution.started', ...stepRun('start', ['call.done', 'call.done']), ...COMPLETED]);
    expect(events.filter((e: Json) => e.event_type === 'call.done').map((e: Json) => e.context.task)).toEqual(['a', 'b']);
    expect(only(events, 'command.completed').result.tasks).toEqual({
      a: { status: 'ok', data: { exit_code: 0, stdout: '21', stderr: '' } },
      b: { status: 'ok', data: { exit_code: 0, stdout: '42\n', stderr: 'note\n' } },
    });
  });
});

describe('loops and branches', () => {
  it('runs a parallel loop of 20 with max_in_flight 3: never more than 3 at once, results in item order', async () => {
    maxInFlight = 0;
    const items = Array.from({ length: 20 }, (_, i) => i);
    const { id, final, events } = await runYaml(
      `
apiVersion: svc/v1
kind: Playbook
metadata: { name: loop, path: tests/loop }
workload: { base: "${target.url}" }
workflow:
  - step: start
    loop: { in: "{{ workload.items }}", iterator: n, mode: parallel, max_in_flight: 3 }
    tool: { name: get, kind: http, url: "{{ workload.base }}/slot/{{ n }}?run={{ execution.id }}" }
`,
      { items },
    );
    expect(final).toMatchObject({ status: 'completed', progress: 100, error: null });
    expect(final.result.map((r: Json) => r.body.item)).toEqual(items);
    // At the target: the limit held, and it was the limit that bound (2 workers x 4 slots could do more).
    expect(maxInFlight).toBe(3);
    const hits = target.requests.filter((r) => r.path.startsWith('/slot/') && r.query.run === String(id)).map((r) => Number(r.path.split('/')[2]));
    expect(hits.sort((a, b) => a - b)).toEqual(items);

    const t = trace(events);
    expect(t.slice(0, 2)).toEqual(['execution.started', 'step.enter:start']);
    expect(t.slice(-4)).toEqual(['loop.done:start', 'step.exit:start', ...COMPLETED]);
    // Items are launched in item order, each command right after its loop.item.
    const launched = events.filter((e: Json) => e.event_type === 'loop.item').map((e: Json) => e.context.index);
    expect(launched).toEqual(items);
    for (const [i, e] of events.entries()) {
      if (e.event_type !== 'loop.item') continue;
      expect(events[i + 1]).toMatchObject({ event_type: 'command.issued', step: 'start', context: { loop_index: e.context.index } });
    }
    // Per item, in order: issued, claimed, started, call.done, completed.
    for (const index of items) {
      const seq = events.find((e: Json) => e.event_type === 'command.issued' && e.context.loop_index === index).context.seq;
      const own = events.filter((e: Json) => e.context?.seq === seq);
      expect(trace(own), `item ${index}`).toEqual(command('start', ['call.done']));
    }
    expect(t.filter((x) => x === 'command.completed:start')).toHaveLength(20);
    expect(t).toHaveLength(2 + 20 * 6 + 4);
    // In the log too, never more than 3 commands issued and not yet completed.
    let open = 0;
    let maxOpen = 0;
    for (const e of events) {
      if (e.event_type === 'command.issued') maxOpen = Math.max(maxOpen, ++open);
      if (e.event_type === 'command.completed') open--;
    }
    expect(maxOpen).toBe(3);
  });

  it('fans out inclusively: every matching arc starts a branch; the result is the last branch to finish', async () => {
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: fan, path: tests/fanout }
workflow:
  - step: start
    tool: { name: s, kind: shell, command: "echo go" }
    next:
      mode: inclusive
      arcs:
        - { step: left, when: "{{ outcome.status == 'ok' }}", set: { side: left } }
        - { step: right, when: "{{ true }}" }
        - { step: never, when: "{{ false }}" }
  - step: left
    tool: { name: l, kind: shell, command: "echo left {{ vars.side }}" }
  - step: right
    tool: { name: r, kind: shell, command: "echo right {{ vars.side }}" }
  - step: never
    tool: { name: n, kind: shell, command: "echo never" }
`);
    expect(final).toMatchObject({ status: 'completed', progress: 100, error: null });
    const t = trace(events);
    // Both branches start in the transition that ends `start`, in arc order.
    const fork = ['execution.started', ...stepRun('start'), 'step.enter:left', 'command.issued:left', 'step.enter:right', 'command.issued:right'];
    expect(t.slice(0, fork.length)).toEqual(fork);
    expect(t.slice(-2)).toEqual(COMPLETED);
    // After the fork the branches interleave freely; each keeps its own order.
    const middle = events.slice(fork.length, -2);
    const branch = (step: string) => ['command.claimed', 'command.started', 'call.done', 'command.completed', 'step.exit'].map((x) => `${x}:${step}`);
    expect(trace(middle.filter((e: Json) => e.step === 'left'))).toEqual(branch('left'));
    expect(trace(middle.filter((e: Json) => e.step === 'right'))).toEqual(branch('right'));
    expect(middle).toHaveLength(10);
    expect(t.some((x) => x.endsWith(':never'))).toBe(false);
    // An arc's set is seen by the branches started after it.
    const exits = events.filter((e: Json) => e.event_type === 'step.exit' && e.step !== 'start');
    expect(Object.fromEntries(exits.map((e: Json) => [e.step, e.result.stdout]))).toEqual({ left: 'left left\n', right: 'right left\n' });
    expect(final.result).toEqual(exits.at(-1).result);
  });
});

describe('child playbooks and cancellation', () => {
  it('runs a child playbook with args; the parent step continues with the child result', async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: child, path: tests/child }
workload: { who: nobody }
workflow:
  - step: start
    tool: { name: greet, kind: shell, command: "echo hello {{ workload.who }} {{ args.n }}" }
`);
    const { id, final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: tests/parent }
workflow:
  - step: start
    tool:
      - { name: sub, kind: playbook, path: tests/child, args: { who: "world", n: 7 } }
      - { name: after, kind: shell, command: "echo child said {{ tasks.sub.data.result.stdout | trim }}" }
`);
    expect(final).toMatchObject({ status: 'completed', progress: 100, error: null, parent_execution_id: null });
    expect(final.result).toEqual({ exit_code: 0, stdout: 'child said hello world 7\n', stderr: '' });
    // The playbook task runs on the server (no command); the shell task after it is one worker command.
    expect(trace(events)).toEqual([
      'execution.started',
      'step.enter:start',
      'child.started:start',
      'child.finished',
      ...command('start', ['call.done']),
      'step.exit:start',
      ...COMPLETED,
    ]);
    const started = only(events, 'child.started');
    const finished = only(events, 'child.finished');
    const childId = started.context.child_execution_id;
    expect(started.context).toMatchObject({ path: 'tests/child', task: 'sub' });
    expect(finished.context).toMatchObject({ child_execution_id: childId, status: 'completed' });
    expect(finished.event_id).toBeGreaterThan(started.event_id);

    const child = (await http(s.url, 'GET', `/api/executions/${childId}`)).body;
    expect(child).toMatchObject({ status: 'completed', progress: 100, parent_execution_id: id, root_execution_id: id, path: 'tests/child' });
    expect(child.result).toEqual({ exit_code: 0, stdout: 'hello world 7\n', stderr: '' });
    expect(finished.result).toEqual(child.result);
    const childEvents = await s.events(childId);
    expect(trace(childEvents)).toEqual(['execution.started', ...stepRun('start'), ...COMPLETED]);
    // args reach the child as `args` and merged over its workload.
    expect(childEvents[0].context.input).toMatchObject({ args: { who: 'world', n: 7 }, workload: { who: 'world', n: 7 }, parentExecutionId: id, rootExecutionId: id });
  });

  it('cancels a running execution and its running child; the workers kill the running commands', async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: slowchild, path: tests/slowchild }
workflow:
  - step: start
    tool: { name: wait, kind: shell, command: 'echo $$ > {{ workload.dir }}/child.pid; exec sleep 30' }
`);
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: slowparent, path: tests/slowparent }
workflow:
  - step: start
    next: { mode: inclusive, arcs: [ { step: spawn }, { step: busy } ] }
  - step: spawn
    tool: { name: sub, kind: playbook, path: tests/slowchild, args: { dir: "{{ workload.dir }}" } }
  - step: busy
    tool: { name: wait, kind: shell, command: 'echo $$ > {{ workload.dir }}/busy.pid; exec sleep 30', timeout_seconds: 60 }
`);
    const runDir = mkdtempSync(join(dir, 'cancel-'));
    const id = await s.run('tests/slowparent', { dir: runDir });
    // Both sleeps run on workers (each shell wrote its pid, then became the sleep).
    const pids = await until('both commands run', () => {
      const files = ['child.pid', 'busy.pid'].map((f) => join(runDir, f));
      const text = files.map((f) => (existsSync(f) ? readFileSync(f, 'utf8').trim() : ''));
      return text.every(Boolean) ? text.map(Number) : undefined;
    });
    const childId = only(await s.events(id), 'child.started').context.child_execution_id;
    expect((await http(s.url, 'GET', `/api/executions/${childId}`)).body.status).toBe('running');

    const t0 = Date.now();
    const cancel = await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test says stop' });
    expect(cancel).toMatchObject({ status: 200, body: { status: 'cancelled', execution_id: id } });
    const parent = await s.wait(id);
    const child = await s.wait(childId);
    // Progress stays where each stopped: the parent's `start` of three steps, none of the child's one.
    expect(parent).toMatchObject({ status: 'cancelled', progress: 33, result: null, error: { code: 'cancelled', message: 'test says stop' } });
    expect(child).toMatchObject({ status: 'cancelled', progress: 0, result: null, error: { code: 'cancelled', message: `parent execution ${id} ended` } });

    // The workers learn of the cancel from their heartbeat answer and kill the sleeps long before 30 s.
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until('the sleeps are killed', () => (pids.some(alive) ? undefined : true), 10_000);
    expect(Date.now() - t0).toBeLessThan(10_000);
    // Each aborted command is still reported (as late, changing nothing): the evidence of the abort.
    const lateReport = async (executionId: number) =>
      until(`late report of ${executionId}`, async () => {
        const ev = await s.events(executionId);
        // The aborted task failed, so the command's report ends with command.failed.
        return ev.some((e: Json) => e.event_type === 'command.failed') ? ev : undefined;
      });
    const parentEvents = await lateReport(id);
    const childEvents = await lateReport(childId);
    for (const ev of [parentEvents, childEvents]) {
      const err = only(ev, 'call.error');
      expect(err.error).toEqual({ code: 'cancelled', message: 'task stopped: its command was cancelled' });
      expect(err.context).toMatchObject({ late: true, task: 'wait' });
      expect(err.context.duration_ms).toBeLessThan(10_000);
    }

    const beforeCancel = [
      'execution.started',
      'step.enter:start',
      'step.exit:start',
      'step.enter:spawn',
      'child.started:spawn',
      'step.enter:busy',
      'command.issued:busy',
    ];
    const pt = trace(parentEvents);
    expect(pt.slice(0, beforeCancel.length + 2)).toEqual([...beforeCancel, 'execution.cancelled', 'command.cancelled']);
    // Then, in either order, the child's answer and the worker's late report of the aborted command
    // (no command.claimed: a claim is logged with its first report, and this one came too late).
    const after = parentEvents.slice(beforeCancel.length + 2);
    expect(trace(after.filter((e: Json) => e.step === 'busy'))).toEqual(['command.started:busy', 'call.error:busy', 'command.failed:busy']);
    expect(trace(after).sort()).toEqual(['call.error:busy', 'child.finished', 'command.failed:busy', 'command.started:busy']);
    expect(only(parentEvents, 'execution.cancelled').context).toMatchObject({ reason: 'test says stop', cancelled_at: expect.any(String) });
    expect(only(parentEvents, 'child.finished').context).toMatchObject({ child_execution_id: childId, status: 'cancelled' });

    expect(trace(childEvents)).toEqual([
      'execution.started',
      'step.enter:start',
      'command.issued:start',
      'execution.cancelled',
      'command.cancelled',
      'command.started:start',
      'call.error:start',
      'command.failed:start',
    ]);
    // No command of either execution is left for a worker.
    const { rows } = await s.deps.db.query<{ execution_id: number; status: string }>(
      `SELECT execution_id, status FROM core.command WHERE execution_id = ANY($1) ORDER BY command_id`,
      [[id, childId]],
    );
    expect(rows.map((r) => r.status)).toEqual(['CANCELLED', 'CANCELLED']);
    const again = await http(s.url, 'POST', `/api/executions/${id}/cancel`, {});
    expect(again.body).toMatchObject({ status: 'already_finished', execution_status: 'cancelled' });
  });
});

describe('template errors', () => {
  it('fail the task with a message naming the field; the worker process keeps working', async () => {
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: tpl, path: tests/template }
workflow:
  - step: start
    tool: { name: bad, kind: shell, command: "echo {{ nosuchfunction(1) }}" }
`);
    expect(final).toMatchObject({ status: 'failed', progress: 0, result: null });
    expect(final.error).toMatchObject({ code: 'template_error', step: 'start' });
    expect(final.error.message).toMatch(/^template error in start\.bad\.command: .*nosuchfunction/);
    expect(trace(events)).toEqual(['execution.started', ...stepRun('start', ['call.error']), ...FAILED]);
    const err = only(events, 'call.error');
    expect(err.error).toEqual({ code: 'template_error', message: final.error.message });
    // Rendering failed before anything ran: no attempt was made.
    expect(err.context).toMatchObject({ task: 'bad', attempts: 0 });

    const ok = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: after, path: tests/after-template }
workflow:
  - step: start
    tool: { name: fine, kind: shell, command: "echo fine" }
`);
    expect(ok.final).toMatchObject({ status: 'completed', result: { stdout: 'fine\n' } });
    for (const w of s.workers) expect(w.output()).not.toMatch(/uncaught|unhandled/i);
  });
});
