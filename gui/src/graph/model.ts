// The playbook as a graph of steps: from the server's statechart (GET …/statechart, xstate
// machine config whose step states carry meta.step) when it has one, else from the YAML's
// `next` arcs. Pure functions, no I/O.
import { load } from 'js-yaml';
import { entryStep } from '../../../src/dsl/parse-playbook.ts';

export type StepNode = { id: string; label: string; kind: 'step' | 'start' | 'end'; loop?: string; children: string[] };
/** `label`: its `when` as drawn (cut past 40 characters); `when`: the whole condition (the arc's tooltip). */
export type StepEdge = { from: string; to: string; label?: string; when?: string };
export type StepGraph = { nodes: StepNode[]; edges: StepEdge[] };

// The terminals' ids: no step can be named so (the DSL refuses a step name starting with '#'),
// where '__start' and '__end' were step names too, merged with the terminals.
export const START_NODE = '#start';
export const END_NODE = '#end';

type Raw = Record<string, unknown>;
const isRecord = (v: unknown): v is Raw => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Arcs of a step's `next` in any of its three forms (name, list of arcs, {mode, arcs}). */
export function arcsOf(next: unknown): { step: string; when?: string }[] {
  const list = isRecord(next) && Array.isArray(next.arcs) ? next.arcs : Array.isArray(next) ? next : next === undefined || next === null ? [] : [next];
  return list.flatMap((arc) => {
    if (typeof arc === 'string') return [{ step: arc }];
    if (isRecord(arc) && typeof arc.step === 'string') return [{ step: arc.step, when: typeof arc.when === 'string' ? arc.when : undefined }];
    return [];
  });
}

/** A `{{ … }}` condition without its braces: an arc's `when` as its tooltip says it. */
export function whenText(when: string | undefined): string | undefined {
  return when ? when.replace(/^\s*\{\{\s*|\s*\}\}\s*$/g, '') : undefined;
}

/** Shortens a `{{ … }}` condition for an arc's label. */
export function whenLabel(when: string | undefined): string | undefined {
  const inner = whenText(when);
  if (!inner) return undefined;
  return inner.length > 40 ? `${inner.slice(0, 39)}…` : inner;
}

/** The step graph of playbook YAML; null when the text is not a playbook with a workflow. */
export function graphFromYaml(text: string): StepGraph | null {
  let doc: unknown;
  try {
    doc = load(text);
  } catch {
    return null;
  }
  if (!isRecord(doc) || !Array.isArray(doc.workflow)) return null;
  const steps = doc.workflow.filter(isRecord).filter((s) => typeof s.step === 'string');
  if (steps.length === 0) return null;
  const names = new Set(steps.map((s) => s.step as string));
  const entry = entryStep([...names]);
  const nodes: StepNode[] = [{ id: START_NODE, label: 'start', kind: 'start', children: [] }];
  const edges: StepEdge[] = [{ from: START_NODE, to: entry }];
  let anyEnd = false;
  for (const s of steps) {
    const name = s.step as string;
    const tools = Array.isArray(s.tool) ? s.tool : s.tool === undefined ? [] : [s.tool];
    // Each child once: two tasks starting the same playbook drew (and linked) it twice.
    const children = [...new Set(tools.filter(isRecord).flatMap((t) => (t.kind === 'playbook' && typeof t.path === 'string' ? [t.path] : [])))];
    const loop = isRecord(s.loop) ? `loop ${typeof s.loop.mode === 'string' ? s.loop.mode : 'sequential'}` : undefined;
    nodes.push({ id: name, label: name, kind: 'step', loop, children });
    const arcs = arcsOf(s.next).filter((a) => names.has(a.step));
    for (const a of arcs) edges.push({ from: name, to: a.step, label: whenLabel(a.when), when: whenText(a.when) });
    if (arcs.length === 0 || arcs.every((a) => a.when)) {
      edges.push({ from: name, to: END_NODE });
      anyEnd = true;
    }
  }
  if (anyEnd) nodes.push({ id: END_NODE, label: 'end', kind: 'end', children: [] });
  return { nodes, edges };
}

type StateNode = { key: string; id: string; parent: StateNode | null; config: Raw; step: string | null };

/**
 * The step graph of an xstate machine config whose step states carry `meta.step`; arcs from
 * transitions (under `on` and `always`) between states of different steps, labelled with their
 * `meta.when`. Null when no state names a step.
 */
export function graphFromStatechart(machine: unknown): StepGraph | null {
  if (!isRecord(machine)) return null;
  const all: StateNode[] = [];
  const byId = new Map<string, StateNode>();
  const walk = (key: string, config: Raw, parent: StateNode | null) => {
    const id = typeof config.id === 'string' ? config.id : parent ? `${parent.id}.${key}` : key;
    const meta = isRecord(config.meta) ? config.meta : {};
    const node: StateNode = { key, id, parent, config, step: typeof meta.step === 'string' ? meta.step : null };
    all.push(node);
    byId.set(id, node);
    if (isRecord(config.states)) for (const [k, c] of Object.entries(config.states)) if (isRecord(c)) walk(k, c, node);
  };
  walk(typeof machine.id === 'string' ? machine.id : '(machine)', machine, null);
  const stepOf = (n: StateNode | null): string | null => {
    for (let at = n; at; at = at.parent) if (at.step) return at.step;
    return null;
  };
  const resolve = (from: StateNode, target: string): StateNode | undefined => {
    if (target.startsWith('#')) return byId.get(target.slice(1)) ?? all.find((n) => n.id === target.slice(1).split('.')[0]);
    const childOf = (p: StateNode | null, path: string) => {
      let at = p;
      for (const part of path.split('.')) {
        at = at ? (all.find((n) => n.parent === at && n.key === part) ?? null) : null;
        if (!at) return undefined;
      }
      return at ?? undefined;
    };
    if (target.startsWith('.')) return childOf(from, target.slice(1));
    return childOf(from.parent, target);
  };
  const steps = [...new Set(all.flatMap((n) => (n.step ? [n.step] : [])))];
  if (steps.length === 0) return null;
  const nodes: StepNode[] = steps.map((s) => ({ id: s, label: s, kind: 'step', children: [] }));
  const edges: StepEdge[] = [];
  const seen = new Set<string>();
  const finals = new Set<string>();
  // Steps with an arc that fires on success whatever holds (no `when`): after them a branch goes on.
  const goesOn = new Set<string>();
  let endsWhenIdle = false;
  for (const n of all) {
    const fromStep = stepOf(n);
    const transitions: Raw[] = [];
    const collect = (t: unknown) => {
      for (const one of Array.isArray(t) ? t : [t]) {
        if (typeof one === 'string') transitions.push({ target: one });
        else if (isRecord(one)) transitions.push(one);
      }
    };
    if (isRecord(n.config.on)) for (const t of Object.values(n.config.on)) collect(t);
    if (n.config.always !== undefined) collect(n.config.always);
    if (n.config.onDone !== undefined) collect(n.config.onDone);
    for (const t of transitions) {
      for (const target of Array.isArray(t.target) ? t.target : [t.target]) {
        if (typeof target !== 'string') continue;
        const to = resolve(n, target);
        if (!to) continue;
        const toStep = stepOf(to);
        const meta = isRecord(t.meta) ? t.meta : {};
        const when = whenText(typeof meta.when === 'string' ? meta.when : undefined);
        const label = whenLabel(when);
        if (fromStep && !toStep && to.config.type === 'final') finals.add(fromStep);
        // The whole machine ends (a region of its own per step, as the server compiles): every step
        // that leads nowhere ends it.
        if (!fromStep && !toStep && to.config.type === 'final' && to.key === 'completed') endsWhenIdle = true;
        if (!toStep) continue;
        // The server's statechart enters a step inside the step's own region; the arc it stands for
        // is named in meta (`from`: the step it leaves, `entry`: the playbook's first step).
        const arcFrom = typeof meta.from === 'string' ? meta.from : meta.entry === true ? START_NODE : null;
        if (!arcFrom && toStep === fromStep) continue;
        const from = arcFrom ?? fromStep ?? START_NODE;
        if (typeof meta.when !== 'string') goesOn.add(from);
        // By the whole condition: two arcs whose conditions begin alike were drawn as one.
        const key = `${from}>${toStep}>${when ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        edges.push({ from, to: toStep, label, when });
      }
    }
  }
  if (edges.some((e) => e.from === START_NODE)) nodes.unshift({ id: START_NODE, label: 'start', kind: 'start', children: [] });
  // A step whose every arc has a `when` may end its branch (none holds: the machine's `routed`),
  // as the YAML's reading draws it; one with no arc at all always does.
  if (endsWhenIdle) for (const st of steps) if (!goesOn.has(st)) finals.add(st);
  if (finals.size) {
    nodes.push({ id: END_NODE, label: 'end', kind: 'end', children: [] });
    for (const s of finals) edges.push({ from: s, to: END_NODE });
  }
  return { nodes, edges };
}

/**
 * The nodes with the steps in `order` (the playbook's; start first, end last, a step not in it
 * after those that are). The statechart's steps come out of object keys, where a step named "2"
 * or "10" comes first whatever its place in the playbook: the boxes were tabbed through, and the
 * execution page offered its steps, in that order.
 */
export function inStepOrder(nodes: readonly StepNode[], order: readonly string[]): StepNode[] {
  const at = new Map(order.map((s, i) => [s, i]));
  const rank = (n: StepNode): number => (n.kind === 'start' ? -1 : n.kind === 'end' ? order.length + 1 : (at.get(n.id) ?? order.length));
  return nodes.map((n, i) => ({ n, i })).sort((a, b) => rank(a.n) - rank(b.n) || a.i - b.i).map(({ n }) => n);
}

/**
 * `items` by their step's place in `order` (the playbook's), those of one step (or of a step not in
 * it, last) as they were: what the server and the simulation list, waiting steps first of all, come
 * in object key order, a step named "3" before one named "20" whatever the playbook says.
 */
export function byStepOrder<T>(items: readonly T[], stepOf: (item: T) => string, order: readonly string[]): T[] {
  const at = new Map(order.map((s, i) => [s, i]));
  const rank = (item: T): number => at.get(stepOf(item)) ?? order.length;
  return items.map((item, i) => ({ item, i })).sort((a, b) => rank(a.item) - rank(b.item) || a.i - b.i).map(({ item }) => item);
}

/** Adds what the YAML knows and a statechart may not say (loops, child playbooks, the entry arc, the steps' order). */
export function enrich(graph: StepGraph, fromYaml: StepGraph | null): StepGraph {
  if (!fromYaml) return graph;
  const order = fromYaml.nodes.filter((n) => n.kind === 'step').map((n) => n.id);
  const nodes = inStepOrder(graph.nodes, order).map((n) => {
    const y = fromYaml.nodes.find((m) => m.id === n.id);
    return y ? { ...n, loop: n.loop ?? y.loop, children: n.children.length ? n.children : y.children } : n;
  });
  const edges = [...graph.edges];
  if (!nodes.some((n) => n.id === START_NODE)) {
    nodes.unshift({ id: START_NODE, label: 'start', kind: 'start', children: [] });
    for (const e of fromYaml.edges) if (e.from === START_NODE) edges.push(e);
  }
  return { nodes, edges };
}
