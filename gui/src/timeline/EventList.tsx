import { useEffect, useRef, useState } from 'react';
import type { ExecutionEvent } from '../api.ts';
import { JsonView, StatusBadge, formatTime } from '../ui.tsx';

// Events drawn at once, and added by each "Show more": a 1,000-item loop logs about 6,000, whose
// list took the page's main thread for 1.6 s to draw (opening Events, or selecting the loop's step).
const EVENTS_SHOWN = 500;

/**
 * The raw events in log order: type, step, time and attempt, with their context, result and error
 * folded; the first `EVENTS_SHOWN`, then that many more a click (focus goes to the first added).
 */
export function EventList({ events, label }: { events: readonly ExecutionEvent[]; label?: string }) {
  const [limit, setLimit] = useState(EVENTS_SHOWN);
  const list = useRef<HTMLOListElement>(null);
  const focusAt = useRef<number | null>(null);
  // Run on `limit` alone: an earlier render's effect, flushed as this update starts, would take
  // the row before it is drawn.
  useEffect(() => {
    if (focusAt.current === null) return;
    const added = list.current?.children[focusAt.current];
    if (added instanceof HTMLElement) added.focus();
    focusAt.current = null;
  }, [limit]);
  const shown = events.length > limit ? events.slice(0, limit) : events;
  const more = events.length - shown.length;
  return (
    <>
      <ol className="timeline" aria-label={label} ref={list}>
        {shown.map((e) => (
          <li key={e.event_id} className={`ev ev-${e.event_type.replace(/\./g, '-')}`} tabIndex={-1}>
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
      {more > 0 ? (
        <p className="events-more">
          {shown.length} of {events.length} events.{' '}
          <button
            type="button"
            className="link"
            onClick={() => {
              focusAt.current = shown.length;
              setLimit(shown.length + EVENTS_SHOWN);
            }}
          >
            Show {Math.min(more, EVENTS_SHOWN)} more
          </button>
        </p>
      ) : null}
    </>
  );
}

function attemptOf(e: ExecutionEvent): number | undefined {
  const c = e.context;
  return c && typeof c === 'object' && 'attempt' in c && typeof (c as { attempt: unknown }).attempt === 'number' ? (c as { attempt: number }).attempt : undefined;
}
