import { useEffect, useMemo, useState } from 'react';
import { isTerminalExecutionStatus } from '../../../machines/statuses.ts';
import type { ExecutionDetail, ExecutionEvent } from '../api.ts';
import { href } from '../route.ts';
import { Section } from '../ui.tsx';
import { BarDetails } from './BarDetails.tsx';
import { EventList } from './EventList.tsx';
import { Gantt } from './Gantt.tsx';
import { buildTimeline } from './model.ts';
import './timeline.css';

type View = 'gantt' | 'events';

/** Epoch milliseconds, ticking every `everyMs` while it is a number (running bars grow). */
function useNow(everyMs: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (everyMs === null) return;
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return everyMs === null ? now : Math.max(now, Date.now());
}

/**
 * The execution's timeline: the Gantt of its steps, loop items, commands, task attempts, child
 * executions and waits (click a bar for its output, error and events), or the raw event list one
 * click away. `step` (chosen on the statechart) narrows both to that step and shows its events.
 */
export function ExecutionTimeline({ execution, events, step }: { execution: ExecutionDetail; events: readonly ExecutionEvent[]; step: string | null }) {
  const [view, setView] = useState<View>('gantt');
  const [selected, setSelected] = useState<string | null>(null);
  useEffect(() => {
    if (step) setView('events');
  }, [step]);
  const timeline = useMemo(() => buildTimeline(events, execution), [events, execution.started_at, execution.finished_at]);
  const now = useNow(isTerminalExecutionStatus(execution.status) ? null : 1_000);
  const bars = step ? timeline.bars.filter((b) => b.step === step) : timeline.bars;
  // A step's events: those naming it, and those its bars were read from (a child's end is stored without a step).
  const ofBars = new Set(step ? bars.flatMap((b) => b.eventIds) : []);
  const shownEvents = step ? events.filter((e) => e.step === step || ofBars.has(e.event_id)) : events;
  const bar = selected ? bars.find((b) => b.id === selected) : undefined;
  const children = timeline.bars.filter((b) => b.kind === 'child' && b.childExecutionId !== undefined);
  const toggle = (v: View, text: string) => (
    <button type="button" aria-pressed={view === v} className={view === v ? 'pressed' : undefined} onClick={() => setView(v)}>
      {text}
    </button>
  );
  return (
    <Section
      title={step ? `Timeline of ${step}` : 'Timeline'}
      actions={
        <span className="control-group" role="group" aria-label="Timeline view">
          {toggle('gantt', 'Gantt')}
          {toggle('events', `Events (${shownEvents.length})`)}
        </span>
      }
    >
      {execution.parent_execution_id || children.length ? (
        <p className="lineage">
          {execution.parent_execution_id ? (
            <>
              Child of <a href={href(['executions', execution.parent_execution_id])}>execution {execution.parent_execution_id}</a>
              {execution.root_execution_id && execution.root_execution_id !== execution.parent_execution_id ? (
                <>
                  {' '}
                  (root <a href={href(['executions', execution.root_execution_id])}>execution {execution.root_execution_id}</a>)
                </>
              ) : null}
              {children.length ? '. ' : null}
            </>
          ) : null}
          {children.length ? (
            <>
              Child executions:{' '}
              {children.map((c, i) => (
                <span key={c.id}>
                  {i ? ', ' : null}
                  <a href={href(['executions', c.childExecutionId!])}>execution {c.childExecutionId}</a>
                  {c.childPath ? ` (${c.childPath})` : null}
                </span>
              ))}
            </>
          ) : null}
        </p>
      ) : null}
      {view === 'events' ? (
        <EventList events={shownEvents} label="Events" />
      ) : bars.length ? (
        <>
          <Gantt timeline={{ ...timeline, bars }} now={now} selected={bar?.id ?? null} onSelect={(id) => setSelected(id === selected ? null : id)} />
          {bar ? <BarDetails key={bar.id} executionId={execution.execution_id} bar={bar} bars={bars} events={events} now={now} /> : <p className="muted">Click a bar for its output, error and events.</p>}
        </>
      ) : (
        <p className="muted">Nothing has run yet.</p>
      )}
    </Section>
  );
}
