import type { ExecutionEvent } from '../api.ts';
import { JsonView, StatusBadge, formatTime } from '../ui.tsx';

/** The raw events in log order: type, step, time and attempt, with their context, result and error folded. */
export function EventList({ events, label }: { events: readonly ExecutionEvent[]; label?: string }) {
  return (
    <ol className="timeline" aria-label={label}>
      {events.map((e) => (
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
  );
}

function attemptOf(e: ExecutionEvent): number | undefined {
  const c = e.context;
  return c && typeof c === 'object' && 'attempt' in c && typeof (c as { attempt: unknown }).attempt === 'number' ? (c as { attempt: number }).attempt : undefined;
}
