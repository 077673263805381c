// Traces made by two `svc server` processes on one database (docs/operations.md, "Several
// servers, restarts"): the execution starts on one server, a worker on each server reports its
// commands there, so spans open on one server and close on the other, and a child starts and ends
// on whichever routes it. Both servers export to one real OTLP receiver; a clean stop sends what
// is queued. The spans must make one tree: one trace, each span made once, every parent received.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.ts';
import { ServerProcesses, type ServerProcess } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const CHILD = `apiVersion: svc/v1
metadata: { name: spread_child, path: spread/child }
workflow:
  - step: start
    tool: { name: c, kind: noop }
    next: after
  - step: after
    tool: { name: d, kind: noop }
`;

const PARENT = `apiVersion: svc/v1
metadata: { name: spread_parent, path: spread/parent }
workload: { items: [1, 2, 3, 4, 5, 6, 7, 8], target: "" }
workflow:
  - step: start
    tool: { name: a, kind: noop }
    next: each
  - step: each
    loop: { in: "{{ workload.items }}", iterator: it, mode: parallel, max_in_flight: 2 }
    tool: { name: b, kind: http, url: "{{ workload.target }}/delay/150" }
    next: call
  - step: call
    tool: { name: sub, kind: playbook, path: spread/child }
    next: last
  - step: last
    tool: { name: z, kind: noop }
`;

let receiver: OtlpReceiver;
let target: HttpTarget;
let bed: ServerProcesses;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  target = await startHttpTarget();
  bed = await ServerProcesses.open({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    SVC_TRACE_SALT: 'two-servers',
  });
  a = await bed.server({ OTEL_RESOURCE_ATTRIBUTES: 'svc.test.server=a' });
  b = await bed.server({ OTEL_RESOURCE_ATTRIBUTES: 'svc.test.server=b' });
}, 60_000);

afterAll(async () => {
  await bed?.close();
  await receiver?.close();
  await target?.close();
});

const id = (s: ReceivedSpan) => s.attributes['svc.execution.id'];

describe('traces across two servers', () => {
  it('one trace of the execution and its child, each span made once by one server, every parent among them', async () => {
    for (const yaml of [CHILD, PARENT]) expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    // One slot behind each server: the loop's two items in flight (each an http call of 150 ms)
    // are claimed, reported and routed on both, so each server closes spans the other opened.
    await bed.worker(a.base, 1);
    await bed.worker(b.base, 1);
    const started = await http(b.base, 'POST', '/api/run/playbook', { path: 'spread/parent', payload: { target: target.url } });
    expect(started.status).toBe(200);
    const parentId = Number(started.body.execution_id);
    const final = await until(
      'the parent ends',
      async () => {
        const r = await http(a.base, 'GET', `/api/executions/${parentId}`);
        return r.body.status === 'running' ? undefined : r.body;
      },
      60_000,
    );
    expect(final.status).toBe('completed');
    const { rows: executions } = await bed.db.query<{ execution_id: string }>(
      `SELECT execution_id FROM core.execution WHERE root_execution_id = $1 ORDER BY execution_id`,
      [parentId],
    );
    expect(executions).toHaveLength(2);
    const childId = Number(executions[1].execution_id);
    const { rows: commands } = await bed.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM core.command WHERE execution_id = ANY($1::bigint[])`,
      [[parentId, childId]],
    );
    // Which server routed each report: both must have, or nothing crossed between them.
    const { rows: routed } = await bed.db.query<{ n: number }>(`SELECT count(DISTINCT worker_id)::int AS n FROM core.command WHERE execution_id = $1`, [parentId]);
    expect(routed[0].n).toBe(2);

    // A clean stop sends what each server still queues (docs/operations.md).
    await bed.stopAll();
    await until('both playbook spans', () => receiver.spans.filter((s) => s.name.startsWith('playbook ')).length >= 2, 10_000);

    const spans = receiver.spans;
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    // Each span made once: neither server makes a span of what the other committed.
    const ids = spans.map((s) => s.spanId);
    expect(ids.length - new Set(ids).size).toBe(0);
    const known = new Set(ids);
    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => s.name)).toEqual(['playbook spread/parent']);
    expect(spans.filter((s) => s.parentSpanId && !known.has(s.parentSpanId)).map((s) => `${s.name}#${String(id(s))}`)).toEqual([]);
    // The whole tree: two executions, their step runs, every command with its task, the child below its playbook task.
    const names = (execution: number) => spans.filter((s) => id(s) === execution).map((s) => s.name).sort();
    expect(names(parentId)).toEqual(
      [
        'playbook spread/parent',
        'step start', 'command start', 'task a',
        'step each', ...Array.from({ length: 8 }, () => ['command each', 'task b']).flat(),
        'step call', 'task sub',
        'step last', 'command last', 'task z',
      ].sort(),
    );
    expect(names(childId)).toEqual(['playbook spread/child', 'step start', 'command start', 'task c', 'step after', 'command after', 'task d'].sort());
    expect(spans.filter((s) => s.name.startsWith('command ')).length).toBe(commands[0].n);
    const child = spans.find((s) => s.name === 'playbook spread/child')!;
    expect(spans.find((s) => s.spanId === child.parentSpanId)?.name).toBe('task sub');
    // Both servers exported spans of it.
    expect(new Set(spans.map((s) => s.resource['svc.test.server']))).toEqual(new Set(['a', 'b']));
  }, 120_000);
});
