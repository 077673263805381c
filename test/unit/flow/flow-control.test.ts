// Flow control's pure parts (DESIGN.md "Flow control"): the DSL's fields and problems, the keys
// a start's admission renders, and the machine's queued state (no step before execution.admitted;
// a debounced execution runs with the burst's last payload), replayed from the log alike.
import { describe, expect, it } from 'vitest';
import { parsePlaybook, type NormalizedPlaybook } from '../../../src/dsl/parse-playbook.ts';
import { admissionOf } from '../../../src/flow/admission-of.ts';
import { FlowKeyError, MAX_FLOW_KEY_LENGTH } from '../../../machines/flow-key.ts';
import { executionStatusOf } from '../../../machines/execution/step-phase.ts';
import { segmentsOf } from '../../../machines/execution/segments.ts';
import { Driver, inputOf, issued } from '../machines/helpers.ts';
import { toMachineEvent } from '../../../actors/to-machine-event.ts';

const doc = (extra: string, tool = '{ name: t, kind: noop }') => `apiVersion: svc/v1
metadata: { name: f, path: t/f }
workload: { tenant: acme }
${extra}
workflow:
  - step: start
    tool: ${tool}
`;

function parsed(text: string): NormalizedPlaybook {
  const r = parsePlaybook(text);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.playbook;
}
function problems(text: string): { path: string; message: string }[] {
  const r = parsePlaybook(text);
  return r.ok ? [] : r.problems.map(({ path, message }) => ({ path, message }));
}

describe('the DSL', () => {
  it('reads concurrency, priority, debounce and a task limit; priority is 5 by default', () => {
    const pb = parsed(doc('concurrency: { limit: tenant, key: "{{ workload.tenant }}" }\npriority: 7\ndebounce: { key: "{{ workload.tenant }}", seconds: 2 }', '{ name: t, kind: noop, limit: { name: partner-api, key: x } }'));
    expect(pb).toMatchObject({ concurrency: { limit: 'tenant', key: '{{ workload.tenant }}' }, priority: 7, debounce: { seconds: 2 } });
    expect(pb.workflow[0].tasks[0].limit).toEqual({ name: 'partner-api', key: 'x' });
    expect(parsed(doc('')).priority).toBe(5);
  });

  it('names what is wrong: a bad limit name, a priority out of 0..9, a window of 0 s, a limit on a playbook task', () => {
    expect(problems(doc('concurrency: { limit: "no spaces" }'))[0]).toMatchObject({ path: 'concurrency.limit' });
    expect(problems(doc('concurrency: { limit: 0 }'))[0]).toMatchObject({ path: 'concurrency.limit' });
    expect(problems(doc('priority: 10'))).toEqual([{ path: 'priority', message: 'must be <= 9' }]);
    expect(problems(doc('debounce: { seconds: 0 }'))).toEqual([{ path: 'debounce.seconds', message: 'must be > 0' }]);
    expect(problems(doc('concurrency: { limit: 2, keys: x }'))[0]).toMatchObject({ path: 'concurrency.keys' });
    expect(problems(doc('concurrency: { limit: tenant, key: "{{ workload.tenant }}" }', '{ name: t, kind: noop, limit: { name: tenant, key: "{{ workload.tenant }}" } }'))).toEqual([
      { path: 'workflow[0].tool.limit', message: "names the playbook's own concurrency limit tenant with the same key: the task would wait for a slot its execution holds" },
    ]);
    // The same key however it is spelt: it renders the same, so the task would wait the same.
    for (const key of ['{{workload.tenant}}', "{{ workload['tenant'] }}"]) {
      expect(problems(doc('concurrency: { limit: tenant, key: "{{ workload.tenant }}" }', `{ name: t, kind: noop, limit: { name: tenant, key: "${key}" } }`))).toEqual([
        { path: 'workflow[0].tool.limit', message: "names the playbook's own concurrency limit tenant with the same key: the task would wait for a slot its execution holds" },
      ]);
    }
    expect(problems(doc('concurrency: { limit: tenant, key: "{{ workload.tenant }}" }', '{ name: t, kind: noop, limit: { name: tenant, key: other } }'))).toEqual([]);
    expect(problems(doc('', '{ name: c, kind: playbook, path: x/y, limit: { name: l } }'))).toEqual([
      { path: 'workflow[0].tool.limit', message: "applies to a worker's task; a playbook task's child is limited by its own playbook's concurrency" },
    ]);
  });

  it("checks the concurrency and debounce keys at registration: syntax, undefined names, roots a start does not have", () => {
    expect(problems(doc('concurrency: { limit: t1, key: "{{ " }'))).toEqual([{ path: 'concurrency.key', message: 'expected expression, got end of file' }]);
    expect(problems(doc('debounce: { key: "{{ workload.x | nope }}", seconds: 1 }'))).toEqual([{ path: 'debounce.key', message: expect.stringMatching(/^unknown filter 'nope'/) }]);
    expect(problems(doc('concurrency: { limit: t1, key: "{{ wrkload.a }}" }'))).toEqual([{ path: 'concurrency.key', message: "'wrkload' is undefined (did you mean 'workload'?)" }]);
    expect(problems(doc('inputs: { tenant: { type: string } }\nconcurrency: { limit: t1, key: "{{ workload.tenat }}" }'))).toEqual([
      { path: 'concurrency.key', message: "'workload.tenat' is undefined: the workload declares no 'tenat' (did you mean 'tenant'?)" },
    ]);
    expect(problems(doc('debounce: { key: "{{ steps.start.result }}{{ nosuch }}", seconds: 1 }'))).toEqual([
      { path: 'debounce.key', message: "'steps' is not available here: debounce.key reads workload and args" },
      { path: 'debounce.key', message: "'nosuch' is undefined" },
    ]);
    // What a start has: its workload and arguments, a default for what may be absent, the template's own names.
    expect(problems(doc('debounce: { key: "{{ workload.tenant }}-{{ args.y | default(1) }}{% for i in range(2) %}{{ i }}{% endfor %}", seconds: 1 }'))).toEqual([]);
  });

  it('a limited task is a command of its own', () => {
    const pb = parsed(doc('', '[{ name: a, kind: noop }, { name: b, kind: noop, limit: { name: l } }, { name: c, kind: noop }, { name: d, kind: noop }]'));
    expect(segmentsOf(pb.workflow[0]).map((s) => s.tasks.map((t) => t.name))).toEqual([['a'], ['b'], ['c', 'd']]);
  });
});

describe("a start's admission", () => {
  it('renders the keys over the workload; an inline limit is kept under @<path>', () => {
    const pb = parsed(doc('concurrency: { limit: 3, key: "{{ workload.tenant }}-{{ args.region }}" }\ndebounce: { key: "{{ workload.tenant }}", seconds: 1.5 }'));
    expect(admissionOf(pb, 't/f', { tenant: 'acme', region: 'eu' }, { region: 'eu' })).toEqual({ limit: '@t/f', key: 'acme-eu', capacity: 3, debounce: { key: 'acme', seconds: 1.5 } });
    expect(admissionOf(parsed(doc('')), 't/f', {}, {})).toBeUndefined();
    // No key: one key for the whole limit.
    expect(admissionOf(parsed(doc('concurrency: { limit: shared }')), 't/f', {}, {})).toEqual({ limit: 'shared', key: '', capacity: null, debounce: null });
  });

  it('refuses a key that is too long, naming its field', () => {
    const pb = parsed(doc('concurrency: { limit: l, key: "{{ workload.tenant }}" }'));
    expect(() => admissionOf(pb, 't/f', { tenant: 'x'.repeat(MAX_FLOW_KEY_LENGTH + 1) }, {})).toThrow(FlowKeyError);
    expect(() => admissionOf(pb, 't/f', { tenant: 'x'.repeat(MAX_FLOW_KEY_LENGTH + 1) }, {})).toThrow(/concurrency\.key/);
  });
});

describe('the machine', () => {
  const admission = { limit: 'tenant', key: 'acme', capacity: null, debounce: null };

  it('a queued execution enters no step and issues nothing until execution.admitted', () => {
    const d = Driver.of([{ step: 'start', tool: [{ name: 'a', kind: 'noop' }] }], { admission });
    expect(issued(d.last)).toEqual([]);
    expect(executionStatusOf(d.snapshot)).toBe('queued');
    d.send({ type: 'execution.admitted' });
    expect(executionStatusOf(d.snapshot)).toBe('running');
    expect(issued(d.last).map((c) => c.step)).toEqual(['start']);
    // Admitted again: nothing (the guard).
    expect(d.send({ type: 'execution.admitted' })).toEqual([]);
  });

  it("a debounced execution runs with the last start's payload over the playbook's workload", () => {
    const d = Driver.of([{ step: 'start', tool: [{ name: 'a', kind: 'http', url: 'http://x/{{ workload.n }}' }] }], { ...inputOf({ workload: { n: 1, keep: true }, args: { n: 1 } }), admission: { ...admission, debounce: { key: 'k', seconds: 1 } } }, { n: 0, keep: true });
    d.send({ type: 'execution.admitted', args: { n: 99 } });
    expect(d.context.input.args).toEqual({ n: 99 });
    expect(d.context.input.workload).toEqual({ n: 99, keep: true });
    expect(issued(d.last)[0].context.workload).toMatchObject({ n: 99 });
  });

  it("a debounced execution is admitted with its burst's last start's key and priority: its commands carry that priority, its end gives back that key", () => {
    const d = Driver.of([{ step: 'start', tool: [{ name: 'a', kind: 'noop' }] }], { priority: 2, admission: { ...admission, debounce: { key: 'k', seconds: 1 } } });
    d.send({ type: 'execution.admitted', args: { n: 1 }, flow: { limit: 'tenant', key: 'globex', priority: 8 } });
    expect(d.context.input).toMatchObject({ priority: 8, admission: { limit: 'tenant', key: 'globex' } });
    expect(issued(d.last)[0]).toMatchObject({ priority: 8 });
  });

  it('an execution.admitted row gives the machine its limit, key and priority; one of a log written before it recorded them gives none (the start\'s stay)', () => {
    const row = (context: Record<string, unknown>) => ({ event_type: 'execution.admitted', context, result: { n: 1 }, error: null });
    expect(toMachineEvent(row({ limit: '@t/f', key: 'globex', priority: 8, at: 'x' }))).toEqual({ type: 'execution.admitted', args: { n: 1 }, flow: { limit: '@t/f', key: 'globex', priority: 8 } });
    expect(toMachineEvent(row({ limit: null, key: null, priority: 5 }))).toMatchObject({ flow: { limit: null, key: null, priority: 5 } });
    expect(toMachineEvent(row({ limit: '@t/f', at: 'x' }))).toEqual({ type: 'execution.admitted', args: { n: 1 } });
    const d = Driver.of([{ step: 'start', tool: [{ name: 'a', kind: 'noop' }] }], { priority: 2, admission });
    d.send({ type: 'execution.admitted' });
    expect(d.context.input).toMatchObject({ priority: 2, admission });
  });

  it('a command carries its priority and its rendered limit key; a limit key that fails to render fails the task', () => {
    const d = Driver.of([{ step: 'start', tool: [{ name: 'a', kind: 'noop', limit: { name: 'partner', key: '{{ workload.tenant }}' } }] }], { priority: 9, workload: { tenant: 'acme' } });
    expect(issued(d.last)[0]).toMatchObject({ priority: 9, limit: { name: 'partner', key: 'acme' } });
    const bad = Driver.of([{ step: 'start', tool: [{ name: 'a', kind: 'noop', limit: { name: 'partner', key: '{{ workload.missing }}' } }] }]);
    expect(bad.value).toBe('failed');
    expect(bad.context.finished?.error).toMatchObject({ code: 'template_error', step: 'start' });
  });
});
