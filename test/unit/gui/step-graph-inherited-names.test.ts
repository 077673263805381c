// A step may be named like a property every object inherits (`constructor`, `toString`: the docs
// allow every name but __proto__). The console's graph could not be drawn for such a playbook:
// dagre keeps its nodes in plain objects and threw laying the graph out (the catalog page and the
// execution page drew no graph). And its view read a step's status and its loop's progress by a
// plain lookup, which for such a step that never ran found the inherited function (a box classed
// by the function's source, progress "undefined done"). Prefixed dagre keys and own keys now.
import { expect, it } from 'vitest';
import { layoutGraph } from '../../../gui/src/graph/layout.ts';
import { graphFromYaml } from '../../../gui/src/graph/model.ts';
import { stepEntry } from '../../../gui/src/graph/step-status.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: inherited, path: demo/inherited }
workflow:
  - step: start
    tool: { name: a, kind: noop }
    next: constructor
  - step: constructor
    loop: { in: "{{ [1, 2] }}", iterator: n, mode: parallel }
    tool: { name: b, kind: noop }
    next: toString
  - step: toString
    tool: { name: c, kind: noop }
`;

it('lays out a playbook whose steps are named constructor and toString', () => {
  const graph = graphFromYaml(YAML)!;
  const placed = layoutGraph(graph, true);
  const ids = placed.nodes.map((n) => n.id);
  expect(ids).toEqual(expect.arrayContaining(['start', 'constructor', 'toString']));
  for (const n of placed.nodes) expect([n.x, n.y, n.w, n.h].every(Number.isFinite), n.id).toBe(true);
  expect(placed.edges.find((e) => e.from === 'constructor' && e.to === 'toString')?.points.length).toBeGreaterThan(0);
});

it('finds no status or progress for such a step that has not run', () => {
  expect(stepEntry<string>({ start: 'active' }, 'constructor')).toBeUndefined();
  expect(stepEntry({}, 'toString')).toBeUndefined();
  expect(stepEntry({ constructor: 'completed' }, 'constructor')).toBe('completed');
});
