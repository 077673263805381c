// Traces from events, pure: what each closing event makes, the ids server and worker agree on,
// a trace caught up from the log (another server's events), the switch, and the worker's imports.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import { loadConfig } from '../../../src/config.ts';
import type { PresentedCommand } from '../../../src/protocol.ts';
import { inCommandTrace, nextAttemptTraceparent } from '../../../src/telemetry/command-trace.ts';
import { ExecutionTrace, type SpanRecord } from '../../../src/telemetry/execution-trace.ts';
import { ExecutionTraces } from '../../../src/telemetry/execution-traces.ts';
import { keyValuePairsOf } from '../../../src/telemetry/start-tracing.ts';
import { commandSpanId, executionSpanId, stepRunSpanId, taskAttemptSpanId, traceIdOf } from '../../../src/telemetry/trace-ids.ts';
import type { CommittedEvent, CommittedUnit, HeldExecution } from '../../../src/telemetry/trace-sink.ts';
import { tracesConfigured, workerTraces } from '../../../src/telemetry/traces-configured.ts';
import { tracesUrl } from '../../../src/telemetry/trace-switch.ts';

const SALT = 'unit';
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

/** The log of one execution, numbered from `from`. */
function log(executionId: number, from: number, events: (Omit<CommittedEvent, 'execution_id' | 'event_id' | 'error'> & { error?: unknown })[]): CommittedEvent[] {
  return events.map((e, i) => ({ execution_id: executionId, event_id: from + i, error: null, ...e }));
}

/** A two-step execution (`a` then `b`), each one command of one task; `b`'s task failed once then succeeded. */
function twoSteps(id: number): CommittedEvent[] {
  return log(id, 1, [
    { event_type: EVENT.executionStarted, step: null, context: { input: { executionId: id, path: 'p/two', rootExecutionId: id, parentExecutionId: null, parentSeq: null, workload: { secret: 'w' } } }, created_at: iso(0) },
    { event_type: EVENT.stepEnter, step: 'a', context: null, created_at: iso(0) },
    { event_type: EVENT.commandIssued, step: 'a', context: { seq: 1, loop_index: null }, created_at: iso(0) },
    { event_type: EVENT.commandClaimed, step: 'a', context: { seq: 1, attempt: 1, worker_id: 'w1', claimed_at: iso(2) }, created_at: iso(10) },
    { event_type: EVENT.commandStarted, step: 'a', context: { seq: 1, at: iso(3) }, created_at: iso(10) },
    { event_type: EVENT.callDone, step: 'a', context: { seq: 1, task: 't', kind: 'noop', attempts: 1, duration_ms: 4, attempt_ms: 4, at: iso(4) }, created_at: iso(10) },
    { event_type: EVENT.commandCompleted, step: 'a', context: { seq: 1, at: iso(9) }, created_at: iso(10) },
    { event_type: EVENT.stepExit, step: 'a', context: { status: 'ok' }, created_at: iso(10) },
    { event_type: EVENT.stepEnter, step: 'b', context: null, created_at: iso(10) },
    { event_type: EVENT.commandIssued, step: 'b', context: { seq: 2, loop_index: null }, created_at: iso(10) },
    { event_type: EVENT.commandClaimed, step: 'b', context: { seq: 2, attempt: 2, worker_id: 'w2', claimed_at: iso(12) }, created_at: iso(30) },
    { event_type: EVENT.callAttempt, step: 'b', context: { seq: 2, task: 'h', kind: 'http', attempt: 1, duration_ms: 5, at: iso(13) }, error: { code: 'http_status', message: 'HTTP 503' }, created_at: iso(30) },
    { event_type: EVENT.callDone, step: 'b', context: { seq: 2, task: 'h', kind: 'http', attempts: 2, duration_ms: 12, attempt_ms: 4, at: iso(13) }, created_at: iso(30) },
    { event_type: EVENT.commandCompleted, step: 'b', context: { seq: 2, at: iso(26) }, created_at: iso(30) },
    { event_type: EVENT.stepExit, step: 'b', context: { status: 'ok' }, created_at: iso(30) },
    { event_type: EVENT.workflowCompleted, step: null, context: null, created_at: iso(30) },
    { event_type: EVENT.playbookCompleted, step: null, context: null, created_at: iso(30) },
  ]);
}

const byName = (spans: SpanRecord[]) => new Map(spans.map((s) => [`${s.name}${s.attributes['svc.task.attempt'] ? `#${s.attributes['svc.task.attempt']}` : ''}`, s]));

describe('ExecutionTrace', () => {
  it('makes each span at its closing event, with ids, parents, times and attributes, and nothing of the payload', () => {
    const out: SpanRecord[] = [];
    new ExecutionTrace(SALT, 7, 7, '', null).take(twoSteps(7), null, T0 + 999, out);
    const s = byName(out);
    expect([...s.keys()].sort()).toEqual(['command a', 'command b', 'playbook p/two', 'step a', 'step b', 'task h#1', 'task h#2', 'task t#1']);
    const trace = traceIdOf(SALT, 7);
    expect(out.every((x) => x.traceId === trace)).toBe(true);
    expect(s.get('playbook p/two')).toMatchObject({ spanId: executionSpanId(SALT, 7), parentSpanId: null, startMs: T0, endMs: T0 + 30, error: null });
    expect(s.get('step a')).toMatchObject({ spanId: stepRunSpanId(SALT, 7, 1), parentSpanId: executionSpanId(SALT, 7), startMs: T0, endMs: T0 + 10 });
    expect(s.get('step b')).toMatchObject({ spanId: stepRunSpanId(SALT, 7, 2), attributes: { 'svc.step.run': 2 } });
    expect(s.get('command a')).toMatchObject({ spanId: commandSpanId(SALT, 7, 1), parentSpanId: stepRunSpanId(SALT, 7, 1), startMs: T0, endMs: T0 + 9 });
    expect(s.get('command a')!.events).toEqual([{ name: 'claimed', timeMs: T0 + 2, attributes: { 'svc.command.attempt': 1 } }, { name: 'started', timeMs: T0 + 3 }]);
    // The failed attempt: from its start for its length; the last: it ended with the task (at + duration).
    expect(s.get('task h#1')).toMatchObject({ spanId: taskAttemptSpanId(SALT, 7, 2, 2, 'h', 1), parentSpanId: commandSpanId(SALT, 7, 2), kind: 'client', startMs: T0 + 13, endMs: T0 + 18, error: 'http_status' });
    expect(s.get('task h#2')).toMatchObject({ spanId: taskAttemptSpanId(SALT, 7, 2, 2, 'h', 2), startMs: T0 + 21, endMs: T0 + 25, error: null });
    expect(s.get('task h#1')!.attributes).toMatchObject({ 'svc.command.attempt': 2, 'svc.task.attempt': 1, 'error.type': 'http_status', 'svc.status': 'error' });
    expect(JSON.stringify(out)).not.toContain('secret');
    expect(JSON.stringify(out)).not.toContain('HTTP 503');
  });

  it('a failed command and execution carry the error code; what is open when it ends ends with it', () => {
    const out: SpanRecord[] = [];
    const events = log(3, 1, [
      { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/f', rootExecutionId: 1, parentExecutionId: 1, parentSeq: 4 } } },
      { event_type: EVENT.stepEnter, step: 'a', context: null },
      { event_type: EVENT.loopItem, step: 'a', context: { index: 0 } },
      { event_type: EVENT.commandIssued, step: 'a', context: { seq: 1, loop_index: 0 } },
      { event_type: EVENT.commandIssued, step: 'a', context: { seq: 2, loop_index: 1 } },
      { event_type: EVENT.commandFailed, step: 'a', context: { seq: 1 }, error: { code: 'timeout', message: 'x', task: 'sh' } },
      { event_type: EVENT.commandCancelled, step: null, context: { seqs: [2] } },
      { event_type: EVENT.workflowFailed, step: null, context: null },
      { event_type: EVENT.playbookFailed, step: null, context: null, error: { code: 'timeout', step: 'a', message: 'x' } },
    ]);
    const t = new ExecutionTrace(SALT, 3, 3, '', null);
    t.take(events, null, T0, out);
    const s = byName(out);
    expect(t.ended).toBe(true);
    const commands = out.filter((x) => x.name === 'command a');
    expect(commands.map((c) => [c.attributes['svc.loop.index'], c.attributes['svc.command.status'], c.error])).toEqual([
      [0, 'failed', 'timeout'],
      [1, 'cancelled', null],
    ]);
    expect(commands[0].attributes['svc.error.task']).toBe('sh');
    // The run never exited: it ends with the execution, cancelled.
    expect(s.get('step a')!.attributes['svc.step.status']).toBe('cancelled');
    // A child's trace is its root's; its span's parent is the parent's playbook task.
    expect(s.get('playbook p/f')).toMatchObject({ traceId: traceIdOf(SALT, 1), error: 'timeout', attributes: { 'svc.parent_execution.id': 1, 'svc.error.step': 'a', 'svc.execution.status': 'failed' } });
  });

  it('with the machine context, a step.exit ends the run the machine no longer holds, and a command joins the run it was issued for', () => {
    const out: SpanRecord[] = [];
    const t = new ExecutionTrace(SALT, 5, 5, 'p/j', null);
    // Two runs of `j` at once (two branches joining); the second ends first.
    t.take(log(5, 1, [{ event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p/j', rootExecutionId: 5 } } }]), null, T0, out);
    t.take(log(5, 2, [{ event_type: EVENT.stepEnter, step: 'j', context: null }, { event_type: EVENT.commandIssued, step: 'j', context: { seq: 1 } }]), { nextRun: 2, runs: { '#1': {} }, pending: { '#1': { run: 1 } } }, T0, out);
    t.take(log(5, 4, [{ event_type: EVENT.stepEnter, step: 'j', context: null }, { event_type: EVENT.commandIssued, step: 'j', context: { seq: 2 } }]), { nextRun: 3, runs: { '#1': {}, '#2': {} }, pending: { '#1': { run: 1 }, '#2': { run: 2 } } }, T0, out);
    t.take(log(5, 6, [{ event_type: EVENT.commandCompleted, step: 'j', context: { seq: 2 } }, { event_type: EVENT.stepExit, step: 'j', context: { status: 'ok' } }]), { nextRun: 3, runs: { '#1': {} }, pending: { '#1': { run: 1 } } }, T0, out);
    expect(out.map((x) => [x.name, x.spanId, x.parentSpanId])).toEqual([
      ['command j', commandSpanId(SALT, 5, 2), stepRunSpanId(SALT, 5, 2)],
      ['step j', stepRunSpanId(SALT, 5, 2), executionSpanId(SALT, 5)],
    ]);
  });
});

describe('ExecutionTraces', () => {
  const held = (id: number, context: HeldExecution['snapshot'] = null): HeldExecution => ({ id, status: 'running', row: { path: 'p/two', root_execution_id: id, parent_execution_id: null }, snapshot: context });
  const unit = (events: CommittedEvent[], h: HeldExecution[] = [held(events[0].execution_id)]): CommittedUnit => ({ held: h, rows: { events, inbox: [] } });

  it('reads what another server committed (a gap in the ids) and makes only its own spans', async () => {
    const all = twoSteps(9);
    const reads: [number, number, number][] = [];
    const emitted: SpanRecord[] = [];
    const traces = new ExecutionTraces({
      salt: SALT,
      readEvents: async (id, after, limit) => {
        reads.push([id, after, limit]);
        return all.slice(after, after + limit);
      },
      emit: (spans) => emitted.push(...spans),
      log: { warn: () => {} },
    });
    // This server committed step b's report onwards (events 11..17): it reads 1..10 first.
    traces.committed(unit(all.slice(10)));
    await traces.settled();
    expect(reads).toEqual([[9, 0, 10]]);
    expect(emitted.map((s) => s.name).sort()).toEqual(['command b', 'playbook p/two', 'step b', 'task h', 'task h']);
    expect(emitted.find((s) => s.name === 'playbook p/two')!.startMs).toBe(T0);
    expect(traces.held).toBe(0); // ended: dropped
  });

  it('takes a unit after the last it saw without a read; a unit of an execution ended before is not read', async () => {
    const all = twoSteps(4);
    let reads = 0;
    const emitted: SpanRecord[] = [];
    const traces = new ExecutionTraces({ salt: SALT, readEvents: async () => (reads++, []), emit: (s) => emitted.push(...s), log: { warn: () => {} } });
    traces.committed(unit(all.slice(0, 3)));
    traces.committed(unit(all.slice(3, 8)));
    expect(emitted.map((s) => s.name)).toEqual(['task t', 'command a', 'step a']);
    traces.committed(unit(log(12, 40, [{ event_type: EVENT.commandRefused, step: 'a', context: {} }]), [{ ...held(12), status: 'completed' }]));
    await traces.settled();
    expect(reads).toBe(0);
  });

  it('a child\'s end delivered to its parent ends the parent\'s playbook task', () => {
    const emitted: SpanRecord[] = [];
    const traces = new ExecutionTraces({ salt: SALT, readEvents: async () => [], emit: (s) => emitted.push(...s), log: { warn: () => {} } });
    const parent = log(1, 1, [
      { event_type: EVENT.executionStarted, step: null, context: { input: { path: 'p', rootExecutionId: 1 } } },
      { event_type: EVENT.stepEnter, step: 'call', context: null },
      { event_type: EVENT.childStarted, step: 'call', context: { seq: 1, child_execution_id: 2, path: 'c', task: 'sub' } },
    ]);
    traces.committed(unit(parent, [held(1, { context: { nextRun: 2, runs: { '#1': {} }, pending: { '#1': { run: 1 } }, input: { parentSeq: null } } })]));
    traces.committed({ held: [], rows: { events: [], inbox: [{ executionId: 1, event: { event_type: EVENT.childFinished, context: { seq: 1, child_execution_id: 2, status: 'failed' }, error: { code: 'boom' } } }] } });
    expect(emitted).toHaveLength(1);
    expect(emitted[0]).toMatchObject({ name: 'task sub', parentSpanId: stepRunSpanId(SALT, 1, 1), error: 'boom', attributes: { 'svc.child.execution.id': 2, 'svc.status': 'failed' } });
  });
});

describe('the worker\'s traceparent', () => {
  const cmd = { command_id: 3, execution_id: 8, seq: 5, attempt: 2, context: { execution: { root_id: 6 } } } as unknown as PresentedCommand;

  it('names the span the server makes of the same attempt, counting attempts per task', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', SVC_TRACE_SALT: SALT };
    const seen = await inCommandTrace(workerTraces(loadConfig(env)), cmd, async () => {
      await Promise.resolve();
      return [nextAttemptTraceparent('h'), nextAttemptTraceparent('h'), nextAttemptTraceparent('other')];
    });
    const trace = traceIdOf(SALT, 6);
    expect(seen).toEqual([
      `00-${trace}-${taskAttemptSpanId(SALT, 8, 5, 2, 'h', 1)}-01`,
      `00-${trace}-${taskAttemptSpanId(SALT, 8, 5, 2, 'h', 2)}-01`,
      `00-${trace}-${taskAttemptSpanId(SALT, 8, 5, 2, 'other', 1)}-01`,
    ]);
    expect(nextAttemptTraceparent('h')).toBeUndefined(); // outside the command
  });

  it('is off without an endpoint, or with OTEL_SDK_DISABLED / OTEL_TRACES_EXPORTER=none', () => {
    for (const env of [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_SDK_DISABLED: 'true' }, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://x:4318/v1/traces', OTEL_TRACES_EXPORTER: 'none' }]) {
      expect(inCommandTrace(workerTraces(loadConfig(env)), cmd, () => nextAttemptTraceparent('h'))).toBeUndefined();
    }
  });
});

describe('the switch and the config', () => {
  it('traces go to the traces endpoint, else <endpoint>/v1/traces; off by default', () => {
    const on = { disabled: false, exporter: 'otlp' };
    expect(tracesUrl(on)).toBeUndefined();
    expect(tracesUrl({ ...on, endpoint: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(tracesUrl({ ...on, endpoint: 'http://c:4318', tracesEndpoint: 'http://t/x' })).toBe('http://t/x');
    expect(tracesConfigured(loadConfig({}))).toBeUndefined();
    expect(tracesConfigured(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }))).toBe('http://c:4318/v1/traces');
    expect(tracesConfigured(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }))).toBeUndefined();
  });

  it('refuses what it cannot do, naming the variable', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/^invalid OTEL_EXPORTER_OTLP_PROTOCOL: .*grpc is not supported/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://c' })).toThrow(/^invalid OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/^invalid OTEL_TRACES_EXPORTER/);
    expect(keyValuePairsOf('deployment.environment=prod, team=a%2Cb')).toEqual({ 'deployment.environment': 'prod', team: 'a,b' });
  });

  it('what the worker imports of src/telemetry imports nothing of the server', () => {
    const server = /from '\.\.\/(?:db|api|engine|periodic|app|service|config)|from '\.\.\/\.\.\/actors/;
    for (const f of ['command-trace.ts', 'trace-ids.ts', 'trace-switch.ts']) {
      const text = readFileSync(new URL(`../../../src/telemetry/${f}`, import.meta.url), 'utf8');
      expect(text, f).not.toMatch(server);
      expect(text, f).not.toMatch(/@opentelemetry|execution-trace|otlp-export|start-tracing/);
    }
  });
});
