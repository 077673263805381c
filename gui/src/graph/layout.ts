import dagre from '@dagrejs/dagre';
import type { StepGraph } from './model.ts';

export type Placed = {
  width: number;
  height: number;
  nodes: { id: string; x: number; y: number; w: number; h: number }[];
  edges: { from: string; to: string; label?: string; points: { x: number; y: number }[]; labelAt?: { x: number; y: number } }[];
};

// Sizes in CSS pixels of the SVG drawing.
const CHAR_WIDTH_PX = 7.5;
const NODE_HEIGHT_PX = 44;
const NODE_MIN_WIDTH_PX = 90;

/** Room for a loop's progress line ("12/100 done · 2 in flight"), when an execution is shown. */
const PROGRESS_LINE_PX = 14;
const PROGRESS_WIDTH_PX = 160;

// dagre keeps its nodes in plain objects: a step named like an inherited property (`constructor`,
// which the DSL allows) was found there before it was added, and the layout threw. Its keys are
// prefixed, so no step name is one.
const key = (id: string): string => `n:${id}`;

/**
 * Lays the step graph out top to bottom with dagre (ranks by arcs, crossings reduced);
 * `loopProgress` leaves each loop step room for its progress line.
 */
export function layoutGraph(graph: StepGraph, loopProgress = false): Placed {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 30, ranksep: 50, edgesep: 15, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) {
    const small = n.kind !== 'step';
    const text = Math.max(n.label.length, n.loop ? n.loop.length : 0);
    const progress = loopProgress && n.loop !== undefined;
    const width = Math.max(NODE_MIN_WIDTH_PX, text * CHAR_WIDTH_PX + 24, progress ? PROGRESS_WIDTH_PX : 0);
    g.setNode(key(n.id), { width: small ? 60 : width, height: small ? 30 : NODE_HEIGHT_PX + (n.children.length ? 14 : 0) + (progress ? PROGRESS_LINE_PX : 0) });
  }
  graph.edges.forEach((e, i) => {
    g.setEdge(key(e.from), key(e.to), e.label ? { label: e.label, width: e.label.length * 6.2 + 6, height: 14, labelpos: 'c' } : {}, `e${i}`);
  });
  dagre.layout(g);
  const label = g.graph();
  return {
    width: (label.width ?? 0) + 20,
    height: (label.height ?? 0) + 20,
    nodes: graph.nodes.map((n) => {
      const p = g.node(key(n.id));
      return { id: n.id, x: p.x, y: p.y, w: p.width, h: p.height };
    }),
    edges: graph.edges.map((e, i) => {
      const p = g.edge({ v: key(e.from), w: key(e.to), name: `e${i}` });
      return { from: e.from, to: e.to, label: e.label, points: p.points ?? [], labelAt: e.label && p.x !== undefined && p.y !== undefined ? { x: p.x, y: p.y } : undefined };
    }),
  };
}
