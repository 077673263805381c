import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: HttpTarget;
let inFlight = 0;
let maxInFlight = 0;

beforeAll(async () => {
  target = await startHttpTarget(async (req, res) => {
    // /slot/<n>: holds the request a little and records how many overlap.
    const m = /^\/slot\/(\d+)/.exec(req.url ?? '');
    if (!m) return;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, 20 + ((Number(m[1]) * 7) % 30)));
    inFlight--;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ item: Number(m[1]) }));
  });
  s = await startTestStack({ workers: 2, concurrency: 8, env: { SVC_ALLOW_SERVICE_DB_TASKS: 'true' } });
});
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const types = (events: Json[]) => events.map((e: Json) => e.event_type);

async function runYaml(yaml: string, payload: Record<string, unknown> = {}) {
  const reg = await s.register(yaml);
  const id = await s.run(reg.path, payload);
  const final = await s.wait(id);
  return { id, final, events: await s.events(id) };
}

describe('http tasks', () => {
  it('retries 503 with backoff, then succeeds', async () => {
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: flaky, path: tests/http/flaky }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        url: "{{ workload.base }}/flaky?fail=2&key={{ execution.id }}"
        retry: { attempts: 4, delay_seconds: 0.01, backoff: 2 }
`);
    expect(final.status).toBe('completed');
    expect(final.result.status).toBe(200);
    expect(final.result.body).toEqual({ calls: 3 });
    const call = events.find((e: Json) => e.event_type === 'call.done');
    expect(call.context.attempts).toBe(3);
  });

  it('fails the step on 404, and an arc on outcome.status recovers', async () => {
    const failed = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: missing, path: tests/http/missing }
workload: { base: "${target.url}" }
workflow:
  - step: start
    tool: { name: get, kind: http, url: "{{ workload.base }}/status/404" }
`);
    expect(failed.final.status).toBe('failed');
    expect(failed.final.error.message).toMatch(/404/);
    expect(types(failed.events).slice(-2)).toEqual(['workflow.failed', 'playbook.failed']);

    const recovered = await runYaml(`
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
    expect(recovered.final.status).toBe('completed');
    expect(recovered.final.result.stdout).toBe('recovered from 404\n');
    const entered = recovered.events.filter((e: Json) => e.event_type === 'step.enter').map((e: Json) => e.step);
    expect(entered).toEqual(['start', 'fallback']);
  });
});

describe('postgres and shell tasks', () => {
  it('inserts and selects with bind params', async () => {
    const { final } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: pgtasks, path: tests/pg }
workload: { users: [ { id: 1, name: ada }, { id: 2, name: "o'brien" } ] }
workflow:
  - step: start
    tool:
      - { name: create, kind: postgres, command: "CREATE TABLE IF NOT EXISTS public.users_t (id int primary key, name text)" }
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
    expect(final.status).toBe('completed');
    expect(final.result.rows).toEqual([{ id: 1, name: 'ada' }, { id: 2, name: "o'brien" }]);
    expect(final.result.row_count).toBe(2);
  });

  it('runs shell tasks in order within one command and exposes earlier tasks', async () => {
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: sh, path: tests/shell }
workflow:
  - step: start
    tool:
      - { name: a, kind: shell, command: "printf 21" }
      - { name: b, kind: shell, command: "echo $(( {{ tasks.a.data.stdout }} * 2 ))" }
`);
    expect(final.status).toBe('completed');
    expect(final.result.stdout).toBe('42\n');
    expect(types(events).filter((t: string) => t === 'command.issued')).toHaveLength(1);
  });
});

describe('loops and branches', () => {
  it('runs a parallel loop of 20 with max_in_flight 3: never more than 3 at once, results in item order', async () => {
    maxInFlight = 0;
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: loop, path: tests/loop }
workload: { base: "${target.url}", items: [${Array.from({ length: 20 }, (_, i) => i).join(', ')}] }
workflow:
  - step: start
    loop: { in: "{{ workload.items }}", iterator: n, mode: parallel, max_in_flight: 3 }
    tool: { name: get, kind: http, url: "{{ workload.base }}/slot/{{ n }}" }
`);
    expect(final.status).toBe('completed');
    expect(final.result.map((r: Json) => r.body.item)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(maxInFlight).toBeLessThanOrEqual(3);
    expect(maxInFlight).toBeGreaterThan(1);
    expect(types(events).filter((t: string) => t === 'loop.item')).toHaveLength(20);
    expect(types(events)).toContain('loop.done');
  });

  it('fans out inclusively to parallel branches', async () => {
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
        - { step: left, when: "{{ outcome.status == 'ok' }}" }
        - { step: right, when: "{{ true }}" }
        - { step: never, when: "{{ false }}" }
  - step: left
    tool: { name: l, kind: shell, command: "echo left" }
  - step: right
    tool: { name: r, kind: shell, command: "echo right" }
  - step: never
    tool: { name: n, kind: shell, command: "echo never" }
`);
    expect(final.status).toBe('completed');
    const entered = events.filter((e: Json) => e.event_type === 'step.enter').map((e: Json) => e.step);
    expect(entered.slice(0, 1)).toEqual(['start']);
    expect(entered.slice(1).sort()).toEqual(['left', 'right']);
  });
});

describe('child playbooks and cancellation', () => {
  it('runs a child playbook with args; the parent step completes with the child result', async () => {
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
    expect(final.status).toBe('completed');
    expect(final.result.stdout).toBe('child said hello world 7\n');
    const started = events.find((e: Json) => e.event_type === 'child.started');
    const child = (await http(s.url, 'GET', `/api/executions/${started.context.child_execution_id}`)).body;
    expect(child).toMatchObject({ status: 'completed', parent_execution_id: id });
    expect(types(events)).toContain('child.finished');
  });

  it('cancels a running execution and its child; workers stop nothing else', async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: slowchild, path: tests/slowchild }
workflow:
  - step: start
    tool: { name: wait, kind: shell, command: "sleep 30" }
`);
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: slowparent, path: tests/slowparent }
workflow:
  - step: start
    next: { mode: inclusive, arcs: [ { step: spawn }, { step: busy } ] }
  - step: spawn
    tool: { name: sub, kind: playbook, path: tests/slowchild }
  - step: busy
    tool: { name: wait, kind: shell, command: "sleep 30", timeout_seconds: 60 }
`);
    const id = await s.run('tests/slowparent');
    let childId: number | undefined;
    for (let i = 0; i < 200 && !childId; i++) {
      const started = (await s.events(id)).find((e: Json) => e.event_type === 'child.started');
      childId = started?.context.child_execution_id;
      if (!childId) await new Promise((r) => setTimeout(r, 25));
    }
    expect(childId).toBeTruthy();
    const cancel = await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'test says stop' });
    expect(cancel.body.status).toBe('cancelled');
    expect((await s.wait(id)).status).toBe('cancelled');
    const child = await s.wait(childId!);
    expect(child.status).toBe('cancelled');
    const cancelled = (await s.events(id)).find((e: Json) => e.event_type === 'execution.cancelled');
    expect(cancelled.context.reason).toBe('test says stop');
    expect(cancelled.context.cancelled_at).toBeTruthy();
    const again = await http(s.url, 'POST', `/api/executions/${id}/cancel`, {});
    expect(again.body.status).toBe('already_finished');
    // No command of either execution is left pending or claimed.
    const db = new pg.Client({ connectionString: s.databaseUrl });
    await db.connect();
    const open = await db.query(`SELECT count(*)::int AS n FROM core.command WHERE execution_id = ANY($1) AND status IN ('PENDING', 'CLAIMED')`, [[id, childId]]);
    await db.end();
    expect(open.rows[0].n).toBe(0);
  });
});

describe('template errors', () => {
  it('fails the task with a message naming the field, and the worker keeps working', async () => {
    const { final, events } = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: tpl, path: tests/template }
workflow:
  - step: start
    tool: { name: bad, kind: shell, command: "echo {{ nosuchfunction(1) }}" }
`);
    expect(final.status).toBe('failed');
    expect(final.error.message).toMatch(/start\.bad\.command/);
    const err = events.find((e: Json) => e.event_type === 'call.error');
    expect(err.error.code).toBe('template_error');
    const ok = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: after, path: tests/after-template }
workflow:
  - step: start
    tool: { name: fine, kind: shell, command: "echo fine" }
`);
    expect(ok.final.status).toBe('completed');
  });
});
