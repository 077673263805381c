import { useEffect, useRef, useState } from 'react';
import { EVENT } from '../../../machines/event-types.ts';
import { api, apiOrNull, apiSocketUrl, type Execution, type ExecutionEvent } from '../api.ts';
import { loadPlaybookGraph } from '../graph/load-graph.ts';
import type { StepGraph } from '../graph/model.ts';
import { fromEvents, fromState, type ExecutionState, type StepStates } from '../graph/step-status.ts';
import { StepGraphView } from '../graph/StepGraphView.tsx';
import { usePoll } from '../hooks.ts';
import { href, navigate } from '../route.ts';
import { useCan } from '../session.ts';
import { ErrorBox, JsonView, Section, StatusBadge, formatDuration, formatTime } from '../ui.tsx';

// A running execution is read again this often (status, new events, step states) when the
// inspection stream (GET /api/executions/{id}/inspect as a WebSocket) is not open.
const LIVE_REFRESH_MS = 1_000;
const EVENTS_PAGE = 1000;

type Live = { execution: Execution; events: ExecutionEvent[]; states: StepStates };

/** One execution: its statechart coloured by step, the result or error, the event timeline, cancel and re-run. */
export function ExecutionPage({ id }: { id: number }) {
  const canOperate = useCan('operator');
  const events = useRef<ExecutionEvent[]>([]);
  const stateRoute = useRef<boolean | null>(null);
  const [finished, setFinished] = useState(false);
  // While the inspection stream is open, each message (the statechart moved) triggers a read
  // instead of the timer; when it cannot open or drops, polling /state takes over again.
  const [streaming, setStreaming] = useState(false);
  useEffect(() => {
    events.current = [];
    stateRoute.current = null;
    setFinished(false);
  }, [id]);

  const live = usePoll<Live>(
    async (signal) => {
      const execution = await api<Execution>(`/executions/${id}`, { signal });
      // New events only: the log is append-only, so what was read stays true.
      for (;;) {
        const since = events.current.at(-1)?.event_id ?? 0;
        const page = await api<{ events: ExecutionEvent[] }>(`/events/${id}?since_event_id=${since}&limit=${EVENTS_PAGE}`, { signal });
        events.current = [...events.current, ...page.events];
        if (page.events.length < EVENTS_PAGE) break;
      }
      let states = fromEvents(events.current);
      if (stateRoute.current !== false) {
        const state = await apiOrNull<ExecutionState>(`/executions/${id}/state`, { signal });
        stateRoute.current = state !== null;
        if (state) states = { ...states, ...fromState(state) };
      }
      if (execution.status !== 'running') setFinished(true);
      return { execution, events: events.current, states };
    },
    finished || streaming ? null : LIVE_REFRESH_MS,
    [id, finished],
  );
  const reload = useRef(live.reload);
  reload.current = live.reload;
  useEffect(() => {
    const url = finished ? null : apiSocketUrl(`/executions/${id}/inspect`, location.href);
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
  }, [id, finished]);
  const execution = live.data?.execution;
  const graph = usePoll<StepGraph | null>(
    async (signal) => (execution ? ((await loadPlaybookGraph(execution.path, { catalogId: execution.catalog_id, signal }))?.graph ?? null) : null),
    null,
    [execution?.path, execution?.catalog_id],
  );
  const [selected, setSelected] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>();

  if (!execution) return live.error ? <ErrorBox error={live.error} /> : <p>Loading execution {id}…</p>;
  const cancel = async () => {
    if (!confirm(`Cancel execution ${id} and its children?`)) return;
    try {
      await api(`/executions/${id}/cancel`, { body: { reason: 'cancelled from the console' } });
      live.reload();
    } catch (error) {
      setActionError(error);
    }
  };
  const rerun = async () => {
    const started = live.data?.events.find((e) => e.event_type === EVENT.executionStarted);
    const input = started?.context && typeof started.context === 'object' ? (started.context as { input?: { args?: Record<string, unknown> } }).input : undefined;
    try {
      const out = await api<{ execution_id: number }>('/run/playbook', { body: { path: execution.path, payload: input?.args ?? {} } });
      navigate(href(['executions', out.execution_id]));
    } catch (error) {
      setActionError(error);
    }
  };
  const trigger = startedBy(live.data?.events ?? []);
  const shown = selected ? live.data!.events.filter((e) => e.step === selected) : live.data!.events;
  const duration = new Date(execution.finished_at ?? Date.now()).getTime() - new Date(execution.started_at).getTime();
  return (
    <>
      <Section
        title={`Execution ${id}`}
        actions={
          canOperate ? (
            <div className="actions">
              {execution.status === 'running' ? (
                <button type="button" className="danger" onClick={cancel}>
                  Cancel
                </button>
              ) : null}
              <button type="button" onClick={rerun}>
                Re-run
              </button>
            </div>
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
          <dt>Started</dt>
          <dd>{formatTime(execution.started_at)}</dd>
          <dt>Duration</dt>
          <dd>{formatDuration(duration)}</dd>
          {trigger ? (
            <>
              <dt>Started by</dt>
              <dd>
                trigger <a href={href(['triggers'], { path: execution.path, name: trigger.name })}>{trigger.name}</a> ({trigger.kind}), fire key <code>{trigger.fire_key}</code>
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
        <ErrorBox error={actionError} />
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
      <Section title="Statechart" actions={selected ? <button type="button" onClick={() => setSelected(null)}>Show all events</button> : <span className="muted">select a step to filter the timeline</span>}>
        {graph.data ? <StepGraphView graph={graph.data} states={live.data!.states} ended={execution.status === 'running' ? null : execution.status} onSelect={setSelected} selected={selected} /> : <p className="muted">{graph.loading ? 'Drawing…' : 'No graph for this playbook.'}</p>}
      </Section>
      <Section title={selected ? `Timeline of ${selected}` : 'Timeline'}>
        <ol className="timeline">
          {shown.map((e) => (
            <li key={e.event_id} className={`ev ev-${e.event_type.replace(/\./g, '-')}`}>
              <div className="ev-head">
                <span className="ev-id">#{e.event_id}</span>
                <time dateTime={e.created_at}>{formatTime(e.created_at)}</time>
                <strong>{e.event_type}</strong>
                {e.step ? <span className="ev-step">{e.step}</span> : null}
                {attemptOf(e) !== undefined ? <span className="muted">attempt {attemptOf(e)}</span> : null}
                {e.status ? <StatusBadge status={e.status} /> : null}
              </div>
              <JsonView label="context" value={e.context} />
              <JsonView label="result" value={e.result} />
              <JsonView label="error" value={e.error} />
            </li>
          ))}
        </ol>
      </Section>
    </>
  );
}

function attemptOf(e: ExecutionEvent): number | undefined {
  const c = e.context;
  return c && typeof c === 'object' && 'attempt' in c && typeof (c as { attempt: unknown }).attempt === 'number' ? (c as { attempt: number }).attempt : undefined;
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
