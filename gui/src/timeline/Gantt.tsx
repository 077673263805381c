import { useEffect, useMemo, useRef, useState } from 'react';
import { href } from '../route.ts';
import { formatDuration } from '../ui.tsx';
import { CHILD_QUEUED } from './child-queue.ts';
import { lostClaimNote } from './claim-wait.ts';
import { durationOf, type Bar, type Timeline } from './model.ts';

/** Rows of one step run shown before "show all" (a long loop would otherwise draw thousands). */
const ROWS_SHOWN = 60;

const TICKS = 6;

/** A round step for about `TICKS` ticks over `span` milliseconds: 1, 2 or 5 times a power of ten. */
function tickStep(span: number): number {
  const raw = Math.max(1, span / TICKS);
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
}

/** "+1.5 s" from the start of the axis. */
const offsetLabel = (ms: number): string => (ms === 0 ? '0' : `+${formatDuration(ms)}`);

const KIND_WORD: Record<Bar['kind'], string> = { step: 'step', command: 'command', task: 'task', attempt: 'attempt', child: 'child execution', wait: 'wait', queued: 'execution', paused: 'execution' };
/** Bars of the execution itself, not of a step. */
const OWN: ReadonlySet<Bar['kind']> = new Set(['queued', 'paused']);

/** What a screen reader says of a bar: its kind, name, status and duration. */
function describe(bar: Bar, now: number): string {
  const what = bar.kind === 'step' ? `step ${bar.label}` : bar.kind === 'task' ? `task ${bar.label}` : bar.kind === 'attempt' ? `${bar.task} ${bar.label}` : `${KIND_WORD[bar.kind]} ${bar.label}`;
  const where = bar.kind !== 'step' && !OWN.has(bar.kind) ? ` of step ${bar.step}` : '';
  return `${what}${where}, ${bar.status}, ${bar.end === null ? `${bar.status === 'queued' ? 'queued' : bar.status === 'paused' ? 'open' : 'running'} for ` : ''}${formatDuration(durationOf(bar, now))}`;
}

/**
 * The Gantt: one row per bar on a shared time axis (the execution's start to its end, or now),
 * indented under the run of its step, with the duration beside it. Each bar is a button; `onSelect`
 * hears its id. Runs with many items show the first ones until "show all".
 */
export function Gantt({ timeline, now, selected, onSelect }: { timeline: Timeline; now: number; selected: string | null; onSelect: (id: string) => void }) {
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const { bars } = timeline;
  // (A loop of many items has too many bars to spread into Math.min's arguments.)
  const start = bars.reduce((t, b) => Math.min(t, b.queuedFrom ?? b.start), timeline.start);
  const end = bars.reduce((t, b) => Math.max(t, b.end ?? now), timeline.end ?? now);
  const span = Math.max(1, end - start);
  const pct = (t: number) => `${(((t - start) / span) * 100).toFixed(3)}%`;
  const ticks = useMemo(() => {
    const step = tickStep(span);
    const out: number[] = [];
    for (let t = 0; t <= span; t += step) out.push(t);
    return out;
  }, [span]);
  const rows = useMemo(() => visibleRows(bars, expanded), [bars, expanded]);
  // "show all" goes as its rows come: focus goes to the first of them (it fell to the page's body).
  // Run on `expanded` alone: an earlier render's effect, flushed as the click starts, would take
  // the row before it is drawn.
  const list = useRef<HTMLOListElement>(null);
  const focusRow = useRef<number | null>(null);
  useEffect(() => {
    if (focusRow.current === null) return;
    list.current?.children[focusRow.current]?.querySelector<HTMLButtonElement>('button.gantt-bar')?.focus();
    focusRow.current = null;
  }, [expanded]);

  return (
    <div className="gantt" role="group" aria-label="Gantt of the execution" data-start={new Date(start).toISOString()} data-span-ms={span}>
      <div className="gantt-row gantt-axis" aria-hidden="true">
        <span className="gantt-label">time</span>
        <span className="gantt-track">
          {ticks.map((t) => (
            <span key={t} className="gantt-tick" style={{ left: pct(start + t) }}>
              {offsetLabel(t)}
            </span>
          ))}
        </span>
        <span className="gantt-dur">duration</span>
      </div>
      <ol className="gantt-rows" ref={list}>
        {rows.map((row, i) =>
          row.more !== undefined ? (
            <li key={`more-${row.bar.id}`} className="gantt-row gantt-more">
              <span className="gantt-label" style={{ paddingLeft: `${row.bar.depth + 1}rem` }}>
                <button type="button" className="link" onClick={() => {
                    focusRow.current = i;
                    setExpanded(new Set([...expanded, row.bar.id]));
                  }}
                >
                  show all ({row.more} more rows)
                </button>
              </span>
            </li>
          ) : (
            <li key={row.bar.id} className={`gantt-row kind-${row.bar.kind}${selected === row.bar.id ? ' selected' : ''}`}>
              <span className="gantt-label" style={{ paddingLeft: `${row.bar.depth}rem` }} title={row.bar.label}>
                <Label bar={row.bar} />
              </span>
              <span className="gantt-track">
                {ticks.map((t) => (
                  <span key={t} className="gantt-grid" style={{ left: pct(start + t) }} />
                ))}
                {row.bar.queuedFrom !== undefined && row.bar.queuedFrom < row.bar.start ? (
                  <span className="gantt-queued" style={{ left: pct(row.bar.queuedFrom), width: pct(start + row.bar.start - row.bar.queuedFrom) }} title={queuedText(row.bar)} />
                ) : null}
                <button
                  type="button"
                  className={`gantt-bar st-${row.bar.status}${row.bar.approx ? ' approx' : ''}`}
                  style={{ left: pct(row.bar.start), width: pct(start + durationOf(row.bar, now)) }}
                  aria-label={describe(row.bar, now)}
                  aria-pressed={selected === row.bar.id}
                  onClick={() => onSelect(row.bar.id)}
                  {...barData(row.bar, now)}
                />
              </span>
              <span className="gantt-dur">
                {row.bar.approx ? '≈ ' : ''}
                {formatDuration(durationOf(row.bar, now))}
              </span>
            </li>
          ),
        )}
      </ol>
    </div>
  );
}

/** What the grey lead-in of a bar was: a command's wait to be claimed, a child's queue. */
function queuedText(bar: Bar): string {
  const waited = formatDuration(bar.start - (bar.queuedFrom ?? bar.start));
  return bar.kind === 'child' ? `${CHILD_QUEUED} for ${waited} before it started` : `waited ${waited} to be claimed (${lostClaimNote(bar) ?? 'a free worker, or room on a limit of its task'})`;
}

/** The row's name: a child execution links to it. */
function Label({ bar }: { bar: Bar }) {
  if (bar.kind === 'child' && bar.childExecutionId !== undefined) {
    return (
      <>
        {bar.loopIndex !== undefined ? `item ${bar.loopIndex} · ` : null}▸ <a href={href(['executions', bar.childExecutionId])}>{bar.label}</a>
        {bar.childPath ? <span className="muted"> {bar.childPath}</span> : null}
      </>
    );
  }
  if (bar.kind === 'step') return <strong>{bar.label}</strong>;
  if (bar.kind === 'command') {
    // A command of one task is drawn as that task: its name beside the command's.
    const task = bar.task ? ` · ${bar.task}` : '';
    return <>{bar.label}{task}{bar.worker ? <span className="muted"> · {bar.worker}</span> : null}</>;
  }
  if (bar.kind === 'task') return <>{bar.label}{bar.attempts && bar.attempts > 1 ? <span className="muted"> · {bar.attempts} attempts</span> : null}</>;
  return <>{bar.label}</>;
}

/** The bar's facts as attributes (what the tests and scripts read). */
function barData(bar: Bar, now: number): Record<string, string | number | undefined> {
  return {
    'data-bar': bar.id,
    'data-kind': bar.kind,
    'data-step': bar.step,
    'data-status': bar.status,
    'data-start': new Date(bar.start).toISOString(),
    'data-end': bar.end === null ? undefined : new Date(bar.end).toISOString(),
    'data-duration-ms': Math.round(durationOf(bar, now)),
    'data-seq': bar.seq,
    'data-loop-index': bar.loopIndex,
    'data-task': bar.task,
    'data-attempt': bar.attempt,
    'data-child': bar.childExecutionId,
    'data-worker': bar.worker,
    'data-approx': bar.approx ? 'true' : undefined,
  };
}

type Row = { bar: Bar; more?: number };

/** The rows drawn: under a step run not expanded, its first ROWS_SHOWN rows, then how many more. */
function visibleRows(bars: readonly Bar[], expanded: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  let run: Bar | null = null;
  let shown = 0;
  let hidden = 0;
  const flush = () => {
    if (run && hidden) rows.push({ bar: run, more: hidden });
  };
  for (const bar of bars) {
    if (bar.depth === 0) {
      flush();
      run = bar;
      shown = 0;
      hidden = 0;
      rows.push({ bar });
      continue;
    }
    if (run && !expanded.has(run.id) && shown >= ROWS_SHOWN) {
      hidden++;
      continue;
    }
    shown++;
    rows.push({ bar });
  }
  flush();
  return rows;
}
