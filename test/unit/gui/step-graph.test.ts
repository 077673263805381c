// The console's pure parts: problem paths placed at their YAML lines, the step graph from YAML
// arcs and from a statechart, step states folded from events.
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';
import { END_NODE, START_NODE, graphFromStatechart, graphFromYaml } from '../../../gui/src/graph/model.ts';
import { fromEvents, fromState } from '../../../gui/src/graph/step-status.ts';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { lineOfPath } from '../../../gui/src/yaml-lines.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata:
  name: demo
  path: demo/x
workflow:
  - step: start
    tool:
      - name: a
        kind: shell
        command: "echo 1"
      - { name: b, kind: nope }
    next: middle
  - step: middle
    loop: { in: "{{ [1, 2] }}", iterator: n, mode: parallel }
    next:
      - { step: missing, when: "{{ outcome.status == 'ok' }}" }
      - step: end_step
        when: "{{ true }}"
  - step: end_step
    tool:
      - name: child
        kind: playbook
        path: demo/child
`;

describe('lineOfPath', () => {
  it('places the parser’s own problem paths at their lines', () => {
    const parsed = parsePlaybook(YAML);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const lines = Object.fromEntries(parsed.problems.map((p) => [p.path, lineOfPath(YAML, p.path)]));
    // kind: nope sits in a flow mapping on line 12; the arc to `missing` on line 17.
    expect(Object.entries(lines).find(([p]) => p.startsWith('workflow[0].tool[1]'))?.[1]).toBe(12);
    expect(Object.entries(lines).find(([p]) => p.startsWith('workflow[1].next[0]'))?.[1]).toBe(17);
  });

  it('finds block keys, items and nested keys', () => {
    expect(lineOfPath(YAML, 'metadata.path')).toBe(5);
    expect(lineOfPath(YAML, 'workflow[0].tool[0].command')).toBe(11);
    expect(lineOfPath(YAML, 'workflow[1].next[1].when')).toBe(19);
    expect(lineOfPath(YAML, 'workflow[2].tool[0].path')).toBe(24);
    expect(lineOfPath(YAML, '$')).toBe(1);
    expect(lineOfPath(YAML, 'YAML syntax error at line 7, column 3: bad')).toBe(7);
    // What is not there points at the nearest part found.
    expect(lineOfPath(YAML, 'workflow[1].nothing')).toBe(14);
  });
});

describe('graphFromYaml', () => {
  it('draws steps, arcs with their conditions, loops, child playbooks, start and end', () => {
    const g = graphFromYaml(YAML.replace('step: missing', 'step: end_step'))!;
    expect(g.nodes.map((n) => n.id)).toEqual([START_NODE, 'start', 'middle', 'end_step', END_NODE]);
    expect(g.nodes.find((n) => n.id === 'middle')!.loop).toBe('loop parallel');
    expect(g.nodes.find((n) => n.id === 'end_step')!.children).toEqual(['demo/child']);
    expect(g.edges).toEqual([
      { from: START_NODE, to: 'start' },
      { from: 'start', to: 'middle', label: undefined, when: undefined },
      { from: 'middle', to: 'end_step', label: "outcome.status == 'ok'", when: "outcome.status == 'ok'" },
      { from: 'middle', to: 'end_step', label: 'true', when: 'true' },
      { from: 'middle', to: END_NODE },
      { from: 'end_step', to: END_NODE },
    ]);
    expect(graphFromYaml('not: [a playbook')).toBeNull();
  });
});

describe('graphFromStatechart', () => {
  it('reads step states by meta.step and arcs by their targets, labelled by meta.when', () => {
    const machine = {
      id: 'pb',
      initial: 'start',
      states: {
        start: { meta: { step: 'start' }, initial: 'run', states: { run: { on: { DONE: { target: '#pb.check' } } } } },
        check: {
          meta: { step: 'check' },
          always: [
            { target: 'fix', guard: 'g0', meta: { when: '{{ outcome.status == "error" }}' } },
            { target: 'done', guard: 'g1' },
          ],
        },
        fix: { meta: { step: 'fix' }, on: { DONE: 'check' } },
        done: { type: 'final' },
      },
    };
    const g = graphFromStatechart(machine)!;
    expect(g.nodes.map((n) => n.id)).toEqual(['start', 'check', 'fix', END_NODE]);
    expect(g.edges).toEqual([
      { from: 'start', to: 'check', label: undefined, when: undefined },
      { from: 'check', to: 'fix', label: 'outcome.status == "error"', when: 'outcome.status == "error"' },
      { from: 'fix', to: 'check', label: undefined, when: undefined },
      { from: 'check', to: END_NODE },
    ]);
    expect(graphFromStatechart({ id: 'x', states: { a: {} } })).toBeNull();
  });
});

describe('fromEvents', () => {
  const ev = (event_type: string, step: string | null, context: unknown = null): ExecutionEvent =>
    ({ event_id: 0, event_type, step, context, status: null, command_id: null, worker_id: null, result: null, error: null, created_at: '' });
  it('folds step.enter / step.exit into active, completed and failed; cancellation ends the active', () => {
    expect(fromEvents([ev('step.enter', 'a'), ev('step.exit', 'a', { status: 'ok' }), ev('step.enter', 'b')])).toEqual({ a: 'completed', b: 'active' });
    expect(fromEvents([ev('step.enter', 'a'), ev('step.exit', 'a', { status: 'error' })])).toEqual({ a: 'failed' });
    // A loop's items enter and exit one by one: active until the last exits.
    expect(fromEvents([ev('step.enter', 'l'), ev('step.enter', 'l'), ev('step.exit', 'l', { status: 'ok' })])).toEqual({ l: 'active' });
    expect(fromEvents([ev('step.enter', 'a'), ev('execution.cancelled', null)])).toEqual({ a: 'cancelled' });
  });
});

describe('fromState', () => {
  it('reads the /state answer: step statuses, the active steps over them', () => {
    const state = { execution_id: 1, status: 'running', active_steps: ['b'], steps: { a: { status: 'completed' as const }, b: { status: 'pending' as const }, c: { status: 'skipped' as const } } };
    expect(fromState(state)).toEqual({ a: 'completed', b: 'active', c: 'skipped' });
  });
});

describe('graphFromStatechart on the server\'s own statechart (machines/playbook-statechart.ts)', () => {
  it('reads the arcs the step regions carry in meta: entry, from→to with when, and the end', async () => {
    const { compileStatechart } = await import('../../../machines/playbook-statechart.ts');
    const parsed = parsePlaybook(`apiVersion: svc/v1
kind: Playbook
metadata: { name: g, path: t/g }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo a" }
    next: transform
  - step: transform
    tool: { name: b, kind: shell, command: "echo b" }
    next: [{ step: report, when: "{{ outcome.status == 'ok' }}" }]
  - step: report
    tool: { name: c, kind: shell, command: "echo c" }
`);
    if (!parsed.ok) throw new Error('fixture');
    const graph = graphFromStatechart(JSON.parse(JSON.stringify(compileStatechart(parsed.playbook))))!;
    expect(graph.edges.map((e) => `${e.from}>${e.to}${e.label ? ` [${e.label}]` : ''}`).sort()).toEqual(
      // transform's only arc has a when: when it does not hold, the execution ends there (as graphFromYaml draws it).
      [`${START_NODE}>start`, 'start>transform', "transform>report [outcome.status == 'ok']", `transform>${END_NODE}`, `report>${END_NODE}`].sort(),
    );
  });
});
