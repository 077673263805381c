import dagre from '@dagrejs/dagre';
import type { StepGraph } from './model.ts';

export type Placed = {
  width: number;
  height: number;
  nodes: { id: string; x: number; y: number; w: number; h: number }[];
  edges: { from: string; to: string; label?: string; when?: string; points: { x: number; y: number }[]; labelAt?: { x: number; y: number } }[];
};

// Sizes in CSS pixels of the SVG drawing. The per-character widths are what `measure` falls back
// to without a browser (unit tests): generous, since a box narrower than its text lets the name
// run over its edges and out of the drawing.
const CHAR_WIDTH_PX = 8.5;
const SUB_CHAR_WIDTH_PX = 6.8;
const NODE_HEIGHT_PX = 44;
const NODE_MIN_WIDTH_PX = 90;

/** Room for a loop's progress line ("12/100 done · 2 in flight"), when an execution is shown. */
const PROGRESS_LINE_PX = 14;
const PROGRESS_WIDTH_PX = 160;

// dagre keeps its nodes in plain objects: a step named like an inherited property (`constructor`,
// which the DSL allows) was found there before it was added, and the layout threw. Its keys are
// prefixed, so no step name is one.
const key = (id: string): string => `n:${id}`;

/** Text widths in CSS pixels: a step's name (`name`, bold) or a line under it (`sub`: its loop, a child path). */
export type Measure = (text: string, kind: 'name' | 'sub') => number;

const estimate: Measure = (text, kind) => text.length * (kind === 'name' ? CHAR_WIDTH_PX : SUB_CHAR_WIDTH_PX);

/** Longest name drawn in full (a step's name may have 256 characters); a longer one is cut with `…`, its full name in the box's tooltip and label. */
const NAME_MAX_CHARS = 48;

/** A step's name as its box shows it. */
export const shownName = (name: string): string => (name.length > NAME_MAX_CHARS ? `${name.slice(0, NAME_MAX_CHARS - 1)}…` : name);

/** The lines under a step's name, as its box draws them (`↻ loop`, `▸ child`). */
export const subLines = (n: { loop?: string; children: string[] }): string[] => [...(n.loop ? [`↻ ${n.loop}`] : []), ...n.children.map((c) => `▸ ${c}`)];

/**
 * Lays the step graph out top to bottom with dagre (ranks by arcs, crossings reduced);
 * `loopProgress` leaves each loop step room for its progress line;
 * each box is as wide as its widest line by `measure` (the browser's font), so no name runs out of it.
 */
export function layoutGraph(graph: StepGraph, loopProgress = false, measure: Measure = estimate): Placed {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 30, ranksep: 50, edgesep: 15, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) {
    const small = n.kind !== 'step';
    const text = Math.max(measure(shownName(n.label), 'name'), ...subLines(n).map((l) => measure(l, 'sub')));
    const progress = loopProgress && n.loop !== undefined;
    const width = Math.max(NODE_MIN_WIDTH_PX, Math.ceil(text) + 24, progress ? PROGRESS_WIDTH_PX : 0);
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
      return { from: e.from, to: e.to, label: e.label, when: e.when, points: p.points ?? [], labelAt: e.label && p.x !== undefined && p.y !== undefined ? { x: p.x, y: p.y } : undefined };
    }),
  };
}
