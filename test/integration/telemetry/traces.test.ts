// OpenTelemetry traces on real parts: a real server and worker, a real OTLP/HTTP receiver (JSON),
// a real HTTP target. A two-step playbook (an http task that fails once and is retried, then a
// child playbook with an http task of its own) makes one trace: the execution, its step runs,
// commands and task attempts, the child's spans below the parent's playbook task, and the target
// sees each attempt's `traceparent` in that trace. No payload value reaches the receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../../src/telemetry/start-tracing.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const CHILD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: traced_child, path: traced/child }
workflow:
  - step: start
    tool: { name: echo, kind: http, method: POST, url: "{{ workload.target }}/echo", body: { secret: "{{ workload.secret }}" } }
`;

const PARENT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: traced_parent, path: traced/parent }
workflow:
  - step: start
    tool:
      name: fetch
      kind: http
      url: "{{ workload.target }}/flaky"
      params: { fail: 1, key: "{{ workload.secret }}" }
      retry: { attempts: 3, delay_seconds: 0.05 }
    next: call
  - step: call
    tool: { name: sub, kind: playbook, path: traced/child, args: { target: "{{ workload.target }}", secret: "{{ workload.secret }}" } }
`;

const SECRET = 'payload-value-4b1d9e';

let receiver: OtlpReceiver;
let target: HttpTarget;
let stack: TestStack;
let tracing: Tracing;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  target = await startHttpTarget();
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'svc-traces-test', OTEL_BSP_SCHEDULE_DELAY: '20', SVC_TRACE_SALT: 'traces-test' };
  stack = await startTestStack({ env });
  // As src/service.ts wires it from the same config.
  tracing = startTracing(stack.deps.config, { db: stack.deps.db, log: stack.deps.log })!;
  stack.deps.traces = tracing;
  await stack.register(CHILD);
  await stack.register(PARENT);
});

afterAll(async () => {
  await stack?.close();
  await tracing?.shutdown();
  await target?.close();
  await receiver?.close();
});

const attr = (s: ReceivedSpan, key: string) => s.attributes[key];

describe('traces of an execution', () => {
  it('one trace: execution, step runs, commands, task attempts, the child below its playbook task; traceparent at the target', async () => {
    const parentId = await stack.run('traced/parent', { target: target.url, secret: SECRET });
    const final = await stack.wait(parentId);
    expect(final.status).toBe('completed');
    await tracing.flush();
    await until('both executions\' spans', () => receiver.spans.filter((s) => s.name.startsWith('playbook ')).length === 2, 10_000);
    await tracing.flush();

    const spans = receiver.spans;
    const names = spans.map((s) => `${s.name}#${attr(s, 'svc.execution.id')}`).sort();
    const childId = Number(spans.find((s) => s.name === 'playbook traced/child')!.attributes['svc.execution.id']);
    expect(childId).not.toBe(parentId);
    expect(names).toEqual(
      [
        `command start#${childId}`,
        `command start#${parentId}`,
        `playbook traced/child#${childId}`,
        `playbook traced/parent#${parentId}`,
        `step call#${parentId}`,
        `step start#${childId}`,
        `step start#${parentId}`,
        `task echo#${childId}`,
        `task fetch#${parentId}`,
        `task fetch#${parentId}`,
        `task sub#${parentId}`,
      ].sort(),
    );
    // One trace, every span once.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
    expect(spans[0].resource['service.name']).toBe('svc-traces-test');

    const one = (name: string, execution: number, more: (s: ReceivedSpan) => boolean = () => true) => {
      const found = spans.filter((s) => s.name === name && attr(s, 'svc.execution.id') === execution && more(s));
      expect(found, `${name} of ${execution}`).toHaveLength(1);
      return found[0];
    };
    const parent = one('playbook traced/parent', parentId);
    const start = one('step start', parentId);
    const startCommand = one('command start', parentId);
    const firstTry = one('task fetch', parentId, (s) => attr(s, 'svc.task.attempt') === 1);
    const secondTry = one('task fetch', parentId, (s) => attr(s, 'svc.task.attempt') === 2);
    const call = one('step call', parentId);
    const sub = one('task sub', parentId);
    const child = one('playbook traced/child', childId);
    const childStart = one('step start', childId);
    const childCommand = one('command start', childId);
    const echo = one('task echo', childId);

    // Parent links: execution → step run → command → task attempt; the child below the playbook task.
    expect(parent.parentSpanId).toBe('');
    expect(start.parentSpanId).toBe(parent.spanId);
    expect(startCommand.parentSpanId).toBe(start.spanId);
    expect(firstTry.parentSpanId).toBe(startCommand.spanId);
    expect(secondTry.parentSpanId).toBe(startCommand.spanId);
    expect(call.parentSpanId).toBe(parent.spanId);
    expect(sub.parentSpanId).toBe(call.spanId);
    expect(child.parentSpanId).toBe(sub.spanId);
    expect(childStart.parentSpanId).toBe(child.spanId);
    expect(childCommand.parentSpanId).toBe(childStart.spanId);
    expect(echo.parentSpanId).toBe(childCommand.spanId);

    // Attributes: path, step, attempt, status and error, no more.
    expect(parent.attributes).toMatchObject({ 'svc.playbook.path': 'traced/parent', 'svc.execution.status': 'completed', 'svc.root_execution.id': parentId });
    expect(child.attributes).toMatchObject({ 'svc.playbook.path': 'traced/child', 'svc.parent_execution.id': parentId, 'svc.root_execution.id': parentId, 'svc.execution.status': 'completed' });
    expect(start.attributes).toMatchObject({ 'svc.step': 'start', 'svc.step.run': 1, 'svc.step.status': 'ok' });
    expect(call.attributes).toMatchObject({ 'svc.step': 'call', 'svc.step.run': 2, 'svc.step.status': 'ok' });
    expect(startCommand.attributes).toMatchObject({ 'svc.step': 'start', 'svc.command.seq': 1, 'svc.command.attempt': 1, 'svc.command.status': 'completed' });
    expect(startCommand.events.map((e) => e.name)).toEqual(['claimed', 'started']);
    expect(firstTry.attributes).toMatchObject({ 'svc.task': 'fetch', 'svc.task.kind': 'http', 'svc.status': 'error', 'error.type': 'http_status' });
    expect(firstTry.status.code).toBe(2); // ERROR
    expect(firstTry.kind).toBe(3); // CLIENT
    expect(secondTry.attributes).toMatchObject({ 'svc.task': 'fetch', 'svc.status': 'ok' });
    expect(secondTry.status.code ?? 0).toBe(0);
    expect(sub.attributes).toMatchObject({ 'svc.task.kind': 'playbook', 'svc.child.execution.id': childId, 'svc.child.playbook.path': 'traced/child', 'svc.status': 'completed' });

    // Times: each span within its parent's, attempts one after the other.
    for (const s of spans) expect(s.endMs).toBeGreaterThanOrEqual(s.startMs);
    expect(firstTry.endMs).toBeLessThanOrEqual(secondTry.startMs + 1);
    expect(parent.startMs).toBeLessThanOrEqual(start.startMs);
    expect(child.endMs).toBeLessThanOrEqual(parent.endMs);
    expect(start.endMs).toBeLessThanOrEqual(call.startMs + 1);

    // The HTTP target saw each attempt's traceparent, in this trace, naming the attempt's span.
    const seen = target.requests.map((r) => ({ path: r.path, traceparent: r.headers.traceparent }));
    expect(seen).toEqual([
      { path: '/flaky', traceparent: `00-${parent.traceId}-${firstTry.spanId}-01` },
      { path: '/flaky', traceparent: `00-${parent.traceId}-${secondTry.spanId}-01` },
      { path: '/echo', traceparent: `00-${parent.traceId}-${echo.spanId}-01` },
    ]);

    // No payload value (the secret, the target's address) in anything the receiver got.
    const sent = receiver.bodies.join('\n');
    expect(sent).not.toContain(SECRET);
    expect(sent).not.toContain(target.url.replace('http://', ''));
  });
});
