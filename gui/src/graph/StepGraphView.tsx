import { useMemo } from 'react';
import { href } from '../route.ts';
import { layoutGraph, shownName } from './layout.ts';
import { browserMeasure } from './measure-text.ts';
import { END_NODE, START_NODE, type StepGraph } from './model.ts';
import { heldText, nodeClass, nodeLabel, nodeTitle } from './node-text.ts';
import { stepEntry, type HeldWork, type LoopProgress, type LoopProgresses, type StepStates, type StepStatus } from './step-status.ts';

/** A child path written as a template (`{{ workload.kid }}`, `{% ... %}`), as the DSL reads one. */
const TEMPLATED = /\{\{|\{%|\{#/;

const DONE: StepStatus[] = ['completed', 'failed', 'active', 'waiting', 'cancelled'];

/** "2/5 done · 2 in flight" (or "3 done" when the number of items is not known). */
const progressText = (l: LoopProgress): string => `${l.length === null ? l.done : `${l.done}/${l.length}`} done${l.in_flight ? ` · ${l.in_flight} in flight` : ''}`;

/**
 * The playbook's machine drawn as a graph: one box per step (coloured by its status when an
 * execution is shown), arcs with their `when`, loops marked (with their items' progress when
 * `loops` is given), child playbooks linked, what a pause holds of a step said (`held`). Each step
 * is focusable; Enter or a click calls `onSelect`.
 */
export function StepGraphView({ graph, states, ended, onSelect, selected, loops, entered, replayed, replayedFrom, held }: { graph: StepGraph; states?: StepStates; ended?: string | null; onSelect?: (step: string) => void; selected?: string | null; loops?: LoopProgresses; entered?: Map<string, Set<string>>; replayed?: ReadonlySet<string>; replayedFrom?: string; held?: HeldWork }) {
  const withProgress = loops !== undefined;
  const placed = useMemo(() => layoutGraph(graph, withProgress, browserMeasure()), [graph, withProgress]);
  const statusOf = (id: string): StepStatus | 'none' => {
    if (!states) return 'none';
    // Started once a step has begun: a queued execution's steps are all pending (it was drawn started).
    if (id === START_NODE) return Object.values(states).some((s) => s !== 'pending' && s !== 'skipped') ? 'completed' : 'pending';
    if (id === END_NODE) return ended === 'completed' ? 'completed' : 'pending';
    return stepEntry(states, id) ?? 'pending';
  };
  const ran = (id: string) => DONE.includes(statusOf(id) as StepStatus);
  // An arc was taken when both of its ends ran (the path a finished execution took); the arc to
  // the end, when its step ran and led to no other step that ran. With the log's entries
  // (`entered`), an arc into a step is taken only when that step was entered from its source.
  const taken = (from: string, to: string) => {
    if (!states || !ran(from) || !ran(to)) return false;
    const into = entered?.get(to);
    if (into) return into.has(from);
    return to !== END_NODE || !graph.edges.some((o) => o.from === from && o.to !== END_NODE && ran(o.to));
  };
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  return (
    <div className="graph-wrap">
      <svg className="graph" width={placed.width} height={placed.height} viewBox={`0 0 ${placed.width} ${placed.height}`} role="group" aria-label="Statechart of the playbook">
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="10" markerHeight="10" markerUnits="userSpaceOnUse" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="arrowhead" />
          </marker>
        </defs>
        {placed.edges.map((e, i) => (
          <g key={i} className={`edge${taken(e.from, e.to) ? ' taken' : ''}`}>
            {/* Its label is cut past 40 characters: the tooltip says the whole condition. */}
            {e.when ? <title>{`${e.from} → ${e.to} when ${e.when}`}</title> : null}
            <path d={e.points.map((p, j) => `${j ? 'L' : 'M'} ${p.x} ${p.y}`).join(' ')} markerEnd="url(#arrow)" />
            {e.label && e.labelAt ? (
              <text x={e.labelAt.x} y={e.labelAt.y + 4} textAnchor="middle" className="edge-label">
                {e.label}
              </text>
            ) : null}
          </g>
        ))}
        {placed.nodes.map((p) => {
          const n = byId.get(p.id)!;
          const status = statusOf(p.id);
          const progress = n.loop && loops ? stepEntry(loops, p.id) : undefined;
          const hold = held ? stepEntry(held, p.id) : undefined;
          const facts = { step: p.id, status, replayed: replayed?.has(p.id) ?? false, replayedFrom, selected: selected === p.id, loop: n.loop ?? undefined, progress: progress ? progressText(progress) : undefined, held: heldText(hold?.held, hold?.children) };
          // Lines from the top: name, loop, its progress, child playbooks; centred as a block.
          const shift = withProgress && n.loop ? 7 : 0;
          if (n.kind !== 'step') {
            return (
              <g key={p.id} className={`terminal st-${status}`} data-node={n.kind}>
                <rect x={p.x - p.w / 2} y={p.y - p.h / 2} width={p.w} height={p.h} rx={p.h / 2} />
                <text x={p.x} y={p.y + 4} textAnchor="middle">
                  {n.label}
                </text>
              </g>
            );
          }
          return (
            <g
              key={p.id}
              className={nodeClass(facts)}
              data-step={p.id}
              data-status={status}
              tabIndex={0}
              // A button only where choosing a step does something (an execution's page): elsewhere
              // (catalog, editor, simulation) it is read, and was announced as a button doing nothing.
              role={onSelect ? 'button' : 'img'}
              aria-label={nodeLabel(facts)}
              data-replayed={facts.replayed ? 'true' : undefined}
              data-loop-length={progress?.length ?? undefined}
              data-loop-done={progress?.done}
              data-loop-in-flight={progress?.in_flight}
              onClick={() => onSelect?.(p.id)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  onSelect?.(p.id);
                }
              }}
            >
              {/* A name too long to draw in full is cut: the tooltip has all of it (the label too). */}
              <title>{nodeTitle(n.label, facts.replayed, replayedFrom, facts.held)}</title>
              <rect x={p.x - p.w / 2} y={p.y - p.h / 2} width={p.w} height={p.h} rx={6} />
              <text x={p.x} y={p.y - (n.loop || n.children.length ? 4 : -4) - shift} textAnchor="middle" className="node-name">
                {shownName(n.label)}
              </text>
              {n.loop ? (
                <text x={p.x} y={p.y + 12 - shift} textAnchor="middle" className="node-sub">
                  ↻ {n.loop}
                </text>
              ) : null}
              {progress ? (
                <text x={p.x} y={p.y + 24 - shift} textAnchor="middle" className="node-sub node-progress">
                  {progressText(progress)}
                </text>
              ) : null}
              {n.children.map((c, i) => {
                const label = (
                  <text x={p.x} y={p.y + 12 + (n.loop ? 12 : 0) + (shift ? 12 : 0) + i * 12 - shift} textAnchor="middle" className={TEMPLATED.test(c) ? 'node-sub' : 'node-link'}>
                    ▸ {c}
                  </text>
                );
                // A templated path is known only as a run renders it: no catalog entry has that name.
                return TEMPLATED.test(c) ? <g key={c}>{label}</g> : <a key={c} href={href(['catalog', 'entry', c])}>{label}</a>;
              })}
            </g>
          );
        })}
      </svg>
      {states ? (
        <ul className="legend" aria-label="Legend">
          {(['pending', 'active', 'waiting', 'completed', 'failed', 'cancelled', 'skipped'] as const).map((s) => (
            <li key={s} className={`st-${s}`}>
              <span className="swatch" /> {s}
            </li>
          ))}
          {held && Object.keys(held).length ? (
            <li className="held">
              <span className="swatch" /> held by the pause
            </li>
          ) : null}
        </ul>
      ) : null}
    </div>
  );
}
