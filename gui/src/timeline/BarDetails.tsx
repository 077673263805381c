import { apiOrNull, type ExecutionEvent } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { href } from '../route.ts';
import { ErrorBox, JsonView, StatusBadge, formatDuration } from '../ui.tsx';
import { CHILD_QUEUED } from './child-queue.ts';
import { lostClaimNote } from './claim-wait.ts';
import { EventList } from './EventList.tsx';
import { durationOf, withDescendants, type Bar } from './model.ts';

/** GET /api/executions/{id}/steps/{step}: each run of a step's work with its tasks' attempts (output capped and masked). */
export type StepRuns = { execution_id: number; step: string; runs: StepRun[]; truncated?: boolean };
export type StepRun = {
  /** null: a wait that ended as it began (`at_once`): no bar of work has it. */
  seq: number | null;
  loop_index: number | null;
  command_id: number | null;
  worker_id: string | null;
  status: string;
  /** When its work was issued (absent from servers before it was answered). */
  issued_at?: string | null;
  claimed_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  child_execution_id: number | null;
  tasks: TaskRun[];
  at_once: 'kept_signal' | 'until_failed' | null;
  error: unknown;
};
export type TaskRun = { task: string; kind: string | null; attempts: AttemptRun[] };
/** `delay_ms`: the retry's wait before it (absent from servers before it was answered). */
export type AttemptRun = { attempt: number; started_at: string | null; duration_ms: number | null; delay_ms?: number | null; status: string; error: unknown; output: unknown };

const WORK: ReadonlySet<Bar['kind']> = new Set(['command', 'task', 'attempt']);

/**
 * What one bar of the Gantt holds: when it ran, its status and error, the output of each task
 * attempt under it (from the step route, else from the events), a child execution's link, and
 * the events it was read from.
 */
export function BarDetails({ executionId, bar, bars, events, now }: { executionId: number; bar: Bar; bars: readonly Bar[]; events: readonly ExecutionEvent[]; now: number }) {
  const under = withDescendants(bars, bar.id);
  // Read again whenever the bar has news (its events or its end).
  const version = `${under.reduce((n, b) => n + b.eventIds.length, 0)}:${bar.end}`;
  const route = usePoll<StepRuns | null>(
    async (signal) => (WORK.has(bar.kind) ? apiOrNull<StepRuns>(`/executions/${executionId}/steps/${encodeURIComponent(bar.step)}`, { signal }) : null),
    null,
    [executionId, bar.step, bar.kind, version],
  );
  const run = route.data?.runs.find((r) => r.seq === bar.seq);
  // A task's or an attempt's error is shown with its attempts below.
  const tasks = WORK.has(bar.kind) ? pickTasks(run?.tasks ?? tasksFromBars(bar, under), bar) : [];
  const ids = new Set(under.flatMap((b) => b.eventIds));
  const own = events.filter((e) => ids.has(e.event_id));
  return (
    <div className="bar-details" role="region" aria-label={`Details of ${title(bar)}`} data-bar={bar.id}>
      <h3>
        {title(bar)} <StatusBadge status={bar.status} />
      </h3>
      <dl className="facts">
        <dt>{bar.claimedOnRow ? 'Claimed' : 'Started'}</dt>
        <dd>
          {bar.status === 'queued' ? `not yet: ${CHILD_QUEUED} since ` : null}
          <time dateTime={new Date(bar.start).toISOString()}>{clock(bar.start)}</time>
          {bar.claimedOnRow ? <span className="muted"> ({bar.end === null ? 'its worker has sent no report yet' : 'its worker had sent no report when it ended: its task may have run'})</span> : null}
        </dd>
        <dt>Ended</dt>
        <dd>{bar.end === null ? (bar.status === 'paused' ? 'not yet: it is paused until it is resumed on its own page' : 'not yet') : <time dateTime={new Date(bar.end).toISOString()}>{clock(bar.end)}</time>}</dd>
        <dt>Duration</dt>
        <dd className="bar-duration" data-duration-ms={Math.round(durationOf(bar, now))}>
          {bar.approx ? '≈ ' : ''}
          {formatDuration(durationOf(bar, now))}
          {bar.approx ? <span className="muted"> (from when the events were stored: the report gave no times)</span> : null}
        </dd>
        {bar.queuedFrom !== undefined && bar.queuedFrom < bar.start ? (
          <>
            <dt>{bar.kind === 'child' ? 'Queued' : lostClaimNote(bar) ? 'From issue to claim' : 'Waited to be claimed'}</dt>
            <dd>
              {formatDuration(bar.start - bar.queuedFrom)} <span className="muted">{bar.kind === 'child' ? `(${CHILD_QUEUED}, from ${clock(bar.queuedFrom)})` : `(${lostClaimNote(bar) ?? 'for a free worker, or for room on a limit of its task'})`}</span>
            </dd>
          </>
        ) : null}
        {bar.worker ? (
          <>
            <dt>Worker</dt>
            <dd>{bar.worker}</dd>
          </>
        ) : null}
        {bar.loopIndex !== undefined ? (
          <>
            <dt>Loop item</dt>
            <dd>{bar.loopIndex}</dd>
          </>
        ) : null}
        {bar.childExecutionId !== undefined ? (
          <>
            <dt>Child execution</dt>
            <dd>
              <a href={href(['executions', bar.childExecutionId])}>execution {bar.childExecutionId}</a>
              {bar.childPath ? <> ({bar.childPath})</> : null}
            </dd>
          </>
        ) : null}
      </dl>
      {bar.error && bar.kind !== 'task' && bar.kind !== 'attempt' ? (
        <div className="outcome failed">
          <h4>Error</h4>
          <pre>{JSON.stringify(bar.error, null, 2)}</pre>
        </div>
      ) : null}
      {tasks.length ? (
        <div className="task-outputs">
          {tasks.map((t) => (
            <section key={t.task} aria-label={`task ${t.task}`}>
              <h4>
                Task {t.task} {t.kind ? <span className="muted">({t.kind})</span> : null}
              </h4>
              <ol className="attempts">
                {t.attempts.map((a) => (
                  <li key={a.attempt} data-attempt={a.attempt}>
                    <div className="ev-head">
                      <strong>attempt {a.attempt}</strong> <StatusBadge status={a.status} />
                      {a.duration_ms !== null ? <span className="muted">{formatDuration(a.duration_ms)}</span> : null}
                      {typeof a.delay_ms === 'number' ? <span className="muted attempt-delay"> after a retry delay of {formatDuration(a.delay_ms)}</span> : null}
                    </div>
                    {a.error ? <pre className="error-text">{errorText(a.error)}</pre> : null}
                    <OutputView value={a.output} />
                  </li>
                ))}
              </ol>
            </section>
          ))}
          {route.data === null ? <p className="muted">Outputs as the events hold them (this server has no step route).</p> : null}
        </div>
      ) : null}
      {!WORK.has(bar.kind) && bar.output !== undefined ? <JsonView label={bar.kind === 'child' ? 'Result of the child' : 'Result'} value={bar.output} open /> : null}
      <ErrorBox error={route.error} />
      <details className="bar-events">
        <summary>Events ({own.length})</summary>
        <EventList events={own} label={`Events of ${title(bar)}`} />
      </details>
    </div>
  );
}

/** A heading for the bar: "step flaky", "task flaky · attempt 2 (step flaky)", … */
export function title(bar: Bar): string {
  switch (bar.kind) {
    case 'step':
      return `Step ${bar.step}`;
    case 'command':
      return `${bar.label} of step ${bar.step}`;
    case 'task':
      return `Task ${bar.task} of step ${bar.step}`;
    case 'attempt':
      return `Task ${bar.task}, ${bar.label} (step ${bar.step})`;
    case 'child':
      return `Child ${bar.label} (step ${bar.step})`;
    case 'wait':
      return `Wait for ${bar.label} (step ${bar.step})`;
    case 'queued':
      return `Execution ${bar.label}`;
    case 'paused':
      return 'Execution paused';
  }
}

/** The tasks and attempts the bar covers: all of a command's, one task's, one attempt. */
function pickTasks(tasks: TaskRun[], bar: Bar): TaskRun[] {
  if (bar.kind === 'command') return tasks;
  const mine = tasks.filter((t) => t.task === bar.task);
  if (bar.kind === 'attempt') return mine.map((t) => ({ ...t, attempts: t.attempts.filter((a) => a.attempt === bar.attempt) }));
  return mine;
}

/** The same shape as the step route, from what the events gave the bars (a server without that route). */
function tasksFromBars(bar: Bar, under: readonly Bar[]): TaskRun[] {
  const cmd = bar.kind === 'command' ? bar : under[0];
  const taskBars = under.filter((b) => b.kind === 'task');
  const attemptOf = (b: Bar): AttemptRun => ({ attempt: b.attempt ?? b.attempts ?? 1, started_at: new Date(b.start).toISOString(), duration_ms: b.end === null ? null : b.end - b.start, status: b.status, error: b.error ?? null, output: b.output });
  if (!taskBars.length && cmd.kind === 'command' && cmd.task) {
    // One task tried once: the command's row is that task; its output is in the command's report.
    const output = (cmd.output as { tasks?: Record<string, { data?: unknown }> } | undefined)?.tasks?.[cmd.task]?.data;
    return [{ task: cmd.task, kind: cmd.taskKind ?? null, attempts: [{ ...attemptOf(cmd), attempt: cmd.attempts ?? 1, output }] }];
  }
  if (bar.kind === 'attempt') return [{ task: bar.task ?? '?', kind: bar.taskKind ?? null, attempts: [attemptOf(bar)] }];
  return taskBars.map((t) => {
    const attempts = under.filter((b) => b.kind === 'attempt' && b.parent === t.id);
    return { task: t.task ?? t.label, kind: t.taskKind ?? null, attempts: attempts.length ? attempts.map(attemptOf) : [{ ...attemptOf(t), attempt: t.attempts ?? 1 }] };
  });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function errorText(error: unknown): string {
  if (isRecord(error) && typeof error.message === 'string') return typeof error.code === 'string' ? `${error.code}: ${error.message}` : error.message;
  return JSON.stringify(error, null, 2);
}

/**
 * A task's output: a shell task's exit code, stdout and stderr as text; a capped one's preview;
 * anything else (http, postgres, mcp) as JSON.
 */
function OutputView({ value }: { value: unknown }) {
  if (value === undefined || value === null) return <p className="muted">No output recorded.</p>;
  if (isRecord(value) && value.truncated === true && typeof value.preview === 'string') {
    return (
      <div className="output">
        <p className="muted">Output of {String(value.bytes)} bytes, cut to its first part:</p>
        <pre>{value.preview}</pre>
      </div>
    );
  }
  if (isRecord(value) && ('stdout' in value || 'stderr' in value) && 'exit_code' in value) {
    return (
      <div className="output shell-output">
        <p>
          exit code <code className="exit-code">{String(value.exit_code)}</code>
        </p>
        {typeof value.stdout === 'string' && value.stdout ? (
          <>
            <h5>stdout</h5>
            <pre aria-label="stdout" className="stdout">
              {value.stdout}
            </pre>
          </>
        ) : null}
        {typeof value.stderr === 'string' && value.stderr ? (
          <>
            <h5>stderr</h5>
            <pre aria-label="stderr" className="stderr">
              {value.stderr}
            </pre>
          </>
        ) : null}
      </div>
    );
  }
  return <JsonView label="output" value={value} open />;
}

// Local time to the millisecond (the Gantt's bars are often shorter than a second).
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hour12: false });
const clock = (t: number): string => CLOCK.format(new Date(t));
