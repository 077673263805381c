import { useEffect, useMemo, useState } from 'react';
import { isTerminalExecutionStatus } from '../../../machines/statuses.ts';
import { apiOrNull, type ExecutionDetail, type ExecutionEvent } from '../api.ts';
import { useNow, usePoll } from '../hooks.ts';
import { href } from '../route.ts';
import { Section } from '../ui.tsx';
import { BarDetails } from './BarDetails.tsx';
import { withChildRuns, type ChildRun } from './child-queue.ts';
import { EventList } from './EventList.tsx';
import { lacksClaim, withHeldClaims, type ClaimRun } from './held-claims.ts';
import { Gantt } from './Gantt.tsx';
import { buildTimeline } from './model.ts';
import './timeline.css';

type View = 'gantt' | 'events';

// While a child runs or waits to be admitted, or a command runs with no claim in the log, its step's runs are read again this often (no event of the parent's says when a child is admitted, nor who holds a command until its first report).
const RUNS_REFRESH_MS = 2_000;

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
  const built = useMemo(() => buildTimeline(events, execution), [events, execution.started_at, execution.finished_at]);
  // The runs of the steps that started children (whether each child was queued, and until when)
  // or hold commands whose claim the log lacks (who holds or held it, since when): the step route's.
  const childBars = built.bars.filter((b) => b.kind === 'child');
  const unclaimed = built.bars.filter(lacksClaim);
  const steps = [...new Set([...childBars, ...unclaimed].map((b) => b.step))];
  const open = childBars.filter((b) => b.end === null).length + unclaimed.filter((b) => b.end === null).length;
  const ended = isTerminalExecutionStatus(execution.status);
  const stepRuns = usePoll<(ChildRun & ClaimRun)[]>(
    async (signal) => (await Promise.all(steps.map((s) => apiOrNull<{ runs: (ChildRun & ClaimRun)[] }>(`/executions/${execution.execution_id}/steps/${encodeURIComponent(s)}`, { signal })))).flatMap((r) => r?.runs ?? []),
    open && !ended ? RUNS_REFRESH_MS : null,
    // Read once more as it ends: a cancelled command's claim is answered once its execution has ended.
    [execution.execution_id, steps.join('\n'), childBars.length, unclaimed.length, open, ended],
  );
  const timeline = useMemo(() => (stepRuns.data?.length ? { ...built, bars: withHeldClaims(withChildRuns(built.bars, stepRuns.data), stepRuns.data) } : built), [built, stepRuns.data]);
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
