import { useEffect, useRef, useState } from 'react';
import { EVENT } from '../../../machines/event-types.ts';
import { isTerminalExecutionStatus } from '../../../machines/statuses.ts';
import { ApiError, api, apiOrNull, apiSocketUrl, errorText, type ExecutionDetail, type ExecutionEvent } from '../api.ts';
import { loadPlaybookGraph } from '../graph/load-graph.ts';
import { END_NODE, START_NODE, type StepGraph } from '../graph/model.ts';
import { endedLoopsFromEvents, enteredFrom, fromEvents, fromState, heldFromState, keptSignalsText, loopsFromState, replayedFromEvents, type ExecutionState, type HeldWork, type KeptSignal, type LoopProgresses, type StepStates } from '../graph/step-status.ts';
import { replayedFromResumed } from '../graph/node-text.ts';
import { StepGraphView } from '../graph/StepGraphView.tsx';
import { useNow, usePoll } from '../hooks.ts';
import { href } from '../route.ts';
import { useCan } from '../session.ts';
import { ExecutionTimeline } from '../timeline/ExecutionTimeline.tsx';
import { ErrorBox, JsonView, Section, StatusBadge, formatDuration, formatTime } from '../ui.tsx';
import { ExecutionControls } from './ExecutionControls.tsx';
import { FlowFact } from './ExecutionFlow.tsx';
import { ExecutionWaits } from './ExecutionWaits.tsx';
import { retryChoices, retryDefault, unbegunRetryFrom } from './retry-default.ts';

// A running execution is read again this often (status, new events, step states) when the
// inspection stream (GET /api/executions/{id}/inspect as a WebSocket) is not open.
const LIVE_REFRESH_MS = 1_000;
const EVENTS_PAGE = 1000;

/** `order`: the playbook's steps in order (the state's step_order; absent from servers before it was answered). */
type Live = { execution: ExecutionDetail; events: ExecutionEvent[]; states: StepStates; loops: LoopProgresses; kept: KeptSignal[]; held: HeldWork; order?: string[] };

/**
 * One execution: its statechart coloured by step, what it waits for while queued (flow control:
 * its limit and key, or debounce window) and what its waiting steps wait for (and a signal's
 * form), the result or error, the event timeline, its controls (pause, resume, cancel, retry, re-run)
 * and its retry links. Rendered keyed by `id`: another execution's page starts afresh.
 */
export function ExecutionPage({ id }: { id: number }) {
  const canOperate = useCan('operator');
  const events = useRef<ExecutionEvent[]>([]);
  const stateRoute = useRef<boolean | null>(null);
  const [finished, setFinished] = useState(false);
  // While the inspection stream is open, each message (the statechart moved) triggers a read
  // instead of the timer; when it cannot open or drops, polling /state takes over again.
  const [streaming, setStreaming] = useState(false);
  // An execution the server does not have (never was, or archived) is not asked for again each second.
  const [gone, setGone] = useState(false);

  const live = usePoll<Live>(
    async (signal) => {
      const execution = await api<ExecutionDetail>(`/executions/${id}`, { signal }).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) setGone(true);
        throw error;
      });
      // New events only: the log is append-only, so what was read stays true.
      for (;;) {
        const since = events.current.at(-1)?.event_id ?? 0;
        const page = await api<{ events: ExecutionEvent[] }>(`/events/${id}?since_event_id=${since}&limit=${EVENTS_PAGE}`, { signal });
        events.current = [...events.current, ...page.events];
        if (page.events.length < EVENTS_PAGE) break;
      }
      let states = fromEvents(events.current);
      let loops = endedLoopsFromEvents(events.current);
      let kept: KeptSignal[] = [];
      let held: HeldWork = {};
      let order: string[] | undefined;
      if (stateRoute.current !== false) {
        const state = await apiOrNull<ExecutionState>(`/executions/${id}/state`, { signal });
        stateRoute.current = state !== null;
        if (state) {
          states = { ...states, ...fromState(state) };
          loops = { ...loops, ...loopsFromState(state) };
          kept = state.kept_signals ?? [];
          held = heldFromState(state);
          order = state.step_order;
        }
      }
      if (isTerminalExecutionStatus(execution.status)) setFinished(true);
      return { execution, events: events.current, states, loops, kept, held, order };
    },
    finished || streaming || gone ? null : LIVE_REFRESH_MS,
    [id, finished],
  );
  const reload = useRef(live.reload);
  reload.current = live.reload;
  // The stream opens once the execution is known to be there (a refused handshake only logs an error).
  const known = live.data !== undefined;
  useEffect(() => {
    const url = finished || !known ? null : apiSocketUrl(`/executions/${id}/inspect`, location.href);
    if (!url) return;
    const socket = new WebSocket(url);
    socket.onopen = () => setStreaming(true);
    socket.onmessage = () => reload.current();
    socket.onclose = () => {
      setStreaming(false);
      reload.current();
    };
    return () => {
      socket.onclose = null;
      socket.close();
      setStreaming(false);
    };
  }, [id, finished, known]);
  const execution = live.data?.execution;
  // A failed read of the playbook (the server away, a proxy's error) is said and tried again: it
  // read 'No graph for this playbook.' for good, as if the playbook had none.
  const [graphFailed, setGraphFailed] = useState(false);
  const graph = usePoll<StepGraph | null>(
    async (signal) => {
      if (!execution) return null;
      try {
        const drawn = (await loadPlaybookGraph(execution.path, { catalogId: execution.catalog_id, signal }))?.graph ?? null;
        setGraphFailed(false);
        return drawn;
      } catch (error) {
        if (!signal.aborted) setGraphFailed(true);
        throw error;
      }
    },
    graphFailed ? LIVE_REFRESH_MS : null,
    [execution?.path, execution?.catalog_id],
  );
  const [selected, setSelected] = useState<string | null>(null);
  // The button goes with the selection: focus goes back to the step it was of (it fell to the page's body).
  const showAll = (step: string) => {
    setSelected(null);
    document.querySelector<SVGGElement>(`svg.graph g[data-step="${CSS.escape(step)}"]`)?.focus();
  };
  const [actionError, setActionError] = useState<unknown>();
  const [actionDone, setActionDone] = useState<string>();

  if (!execution) return live.error ? <ErrorBox error={live.error} /> : <p>Loading execution {id}…</p>;
  const trigger = startedBy(live.data?.events ?? []);
  // In playbook order: the retry's choices are listed, and its entry step found, by it (the
  // states' keys put a step named "2" or "10" first).
  const steps = live.data!.order ?? (graph.data ? graph.data.nodes.filter((n) => n.kind === 'step').map((n) => n.id) : Object.keys(live.data!.states));
  const unbegunFrom = isTerminalExecutionStatus(execution.status) ? unbegunRetryFrom(live.data!.events, steps) : undefined;
  const retryFrom = retryDefault(execution, steps, live.data!.states, unbegunFrom);
  return (
    <>
      <Section
        title={`Execution ${id}`}
        actions={
          canOperate ? (
            <ExecutionControls
              execution={execution}
              steps={retryChoices(execution, steps, live.data!.states, unbegunFrom)}
              retryFrom={retryFrom}
              unbegunFrom={unbegunFrom}
              events={live.data!.events}
              done={(message) => {
                setActionDone(message);
                live.reload();
              }}
              failed={setActionError}
            />
          ) : null
        }
      >
        <dl className="facts">
          <dt>Playbook</dt>
          <dd>
            <a href={href(['catalog', 'entry', execution.path])}>{execution.path}</a>
          </dd>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={execution.status} /> <progress max={100} value={execution.progress} aria-label="progress" /> {execution.progress}%
          </dd>
          {execution.flow ? <FlowFact flow={execution.flow} paused={execution.status === 'paused'} /> : null}
          <dt>Started</dt>
          <dd>{formatTime(execution.started_at)}</dd>
          <dt>Duration</dt>
          <dd>
            <Duration execution={execution} />
          </dd>
          {trigger ? (
            <>
              <dt>Started by</dt>
              <dd>
                trigger <a href={href(['triggers'], { path: execution.path, name: trigger.name })}>{trigger.name}</a> ({trigger.kind}), fire key <code>{trigger.fire_key}</code>
              </dd>
            </>
          ) : execution.requested_by ? (
            <>
              <dt>Started by</dt>
              <dd>
                <a href={href(['executions'], { requested_by: execution.requested_by })}>{execution.requested_by}</a>
              </dd>
            </>
          ) : null}
          {execution.labels && Object.keys(execution.labels).length ? (
            <>
              <dt>Labels</dt>
              <dd className="links">
                {Object.entries(execution.labels).map(([k, value]) => (
                  <code key={k}>
                    {k}={value}
                  </code>
                ))}
              </dd>
            </>
          ) : null}
          {live.data!.kept.length ? (
            <>
              {/* Sent before any step waited for them: a step that says buffer: true takes the oldest. */}
              <dt>{isTerminalExecutionStatus(execution.status) ? 'Signals never taken' : 'Signals kept'}</dt>
              <dd className="kept-signals">{keptSignalsText(live.data!.kept)}</dd>
            </>
          ) : null}
          {execution.retry_of ? (
            <>
              <dt>Retry of</dt>
              <dd>
                <a href={href(['executions', execution.retry_of])}>execution {execution.retry_of}</a>
              </dd>
            </>
          ) : null}
          {execution.resumed_from ? (
            <>
              <dt>Resumed from</dt>
              <dd>
                <a href={href(['executions', execution.resumed_from])}>execution {execution.resumed_from}</a> <span className="muted">(auto-resume restarted it as this one)</span>
              </dd>
            </>
          ) : null}
          {execution.resumed_as ? (
            <>
              <dt>Resumed as</dt>
              <dd>
                <a href={href(['executions', execution.resumed_as])}>execution {execution.resumed_as}</a> <span className="muted">(auto-resume restarted this one as it)</span>
              </dd>
            </>
          ) : null}
          {execution.retried_as?.length ? (
            <>
              <dt>Retried as</dt>
              <dd className="links">
                {execution.retried_as.map((r) => (
                  <a key={r} href={href(['executions', r])}>
                    execution {r}
                  </a>
                ))}
              </dd>
            </>
          ) : null}
          {execution.parent_execution_id ? (
            <>
              <dt>Parent</dt>
              <dd>
                <a href={href(['executions', execution.parent_execution_id])}>{execution.parent_execution_id}</a>
              </dd>
            </>
          ) : null}
        </dl>
        {actionDone ? <p role="status">{actionDone}</p> : null}
        <ErrorBox error={actionError} />
        {/* A read that failed after the page was shown (the server stopped, a proxy's error): what is above is as last read. */}
        <ErrorBox error={live.error} />
        {execution.error ? (
          <div className="outcome failed">
            <h3>Error</h3>
            <pre>{JSON.stringify(execution.error, null, 2)}</pre>
          </div>
        ) : null}
        {execution.result !== null && execution.result !== undefined ? (
          <div className="outcome">
            <JsonView label="Result" value={execution.result} open />
          </div>
        ) : null}
      </Section>
      <ExecutionWaits execution={execution} order={steps} onSent={live.reload} />
      <Section title="Statechart" actions={selected ? <button type="button" onClick={() => showAll(selected)}>Show all events</button> : <span className="muted">select a step to filter the timeline</span>}>
        {graph.data ? <StepGraphView graph={graph.data} states={live.data!.states} ended={isTerminalExecutionStatus(execution.status) ? execution.status : null} onSelect={setSelected} selected={selected} loops={live.data!.loops} entered={enteredFrom(live.data!.events, START_NODE, END_NODE)} replayed={replayedFromEvents(live.data!.events)} replayedFrom={execution.resumed_from ? replayedFromResumed(execution.resumed_from) : undefined} held={live.data!.held} /> : graph.error ? (
          <p className="error" role="alert">
            The statechart could not be read: {errorText(graph.error)}. Trying again…
          </p>
        ) : <p className="muted">{graph.loading ? 'Drawing…' : 'No graph for this playbook.'}</p>}
      </Section>
      <ExecutionTimeline execution={execution} events={live.data!.events} step={selected} />
    </>
  );
}

/**
 * How long it has run, growing each second until it ends. Computed at the page's render alone, it
 * stood still while the inspection stream was open and nothing happened (762 ms, for an execution
 * waiting minutes for its signal): the stream re-renders the page only when the statechart moves.
 */
function Duration({ execution }: { execution: ExecutionDetail }) {
  const now = useNow(execution.finished_at ? null : 1_000);
  return <>{formatDuration(new Date(execution.finished_at ?? now).getTime() - new Date(execution.started_at).getTime())}</>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The trigger and fire that started the execution (execution.started's context.trigger), if one did. */
function startedBy(events: ExecutionEvent[]): { name: string; kind: string; fire_key: string } | undefined {
  const started = events.find((e) => e.event_type === EVENT.executionStarted);
  const trigger = isRecord(started?.context) ? started.context.trigger : undefined;
  if (!isRecord(trigger)) return undefined;
  const { name, kind, fire_key } = trigger;
  return typeof name === 'string' && typeof kind === 'string' && typeof fire_key === 'string' ? { name, kind, fire_key } : undefined;
}
