import type { ExecutionFlow } from '../api.ts';
import { NOT_DEFINED_TEXT, flowState, keyText } from '../flow-text.ts';
import { href } from '../route.ts';
import { formatClock, formatDuration } from '../ui.tsx';

/** A limit and key as words, the limit linked to its keys on the operations page. */
function LimitAndKey({ limit, limitKey }: { limit: string; limitKey: string | null }) {
  return (
    <>
      limit <a href={href(['operations'], { limit })}>{limit}</a>, key <code>{keyText(limitKey ?? '')}</code>
    </>
  );
}

/** Beside a limit named but not defined: no room is coming, the execution stays queued until one is defined. */
function NotDefined({ flow }: { flow: ExecutionFlow }) {
  return flow.defined === false ? <> <span className="badge s-undefined">{NOT_DEFINED_TEXT}</span></> : null;
}

const hasLimit = (flow: ExecutionFlow): flow is ExecutionFlow & { limit: string } => flow.limit !== null;

/**
 * The execution's admission as a fact of its page (flow control): what a queued execution waits for
 * (its limit and key, since when; or its debounce window's close; `paused`: held in its place until
 * resumed), or, once admitted, the slot it holds and how long it was queued.
 */
export function FlowFact({ flow, paused = false }: { flow: ExecutionFlow; paused?: boolean }) {
  const state = flowState(flow);
  const priority = <span className="muted"> · priority {flow.priority}</span>;
  if (state === 'admitted') {
    const queuedMs = Date.parse(flow.admitted_at!) - Date.parse(flow.queued_at);
    return (
      <>
        <dt>Admitted</dt>
        <dd className="flow" data-flow-state={state}>
          {hasLimit(flow) ? (
            <>
              holds a slot of <LimitAndKey limit={flow.limit} limitKey={flow.key} /> since {formatClock(flow.admitted_at)}
            </>
          ) : (
            <>admitted at {formatClock(flow.admitted_at)}</>
          )}{' '}
          (queued {formatDuration(queuedMs)}){priority}
        </dd>
      </>
    );
  }
  return (
    <>
      <dt>Waits for</dt>
      <dd className="flow" data-flow-state={state}>
        {state === 'debounced' ? (
          <>
            debounce window closes at {formatClock(flow.not_before)}
            {hasLimit(flow) ? (
              <>
                , then queued on <LimitAndKey limit={flow.limit} limitKey={flow.key} />
                <NotDefined flow={flow} />
              </>
            ) : null}
          </>
        ) : hasLimit(flow) ? (
          <>
            queued on <LimitAndKey limit={flow.limit} limitKey={flow.key} /> since {formatClock(flow.queued_at)}
            <NotDefined flow={flow} />
          </>
        ) : (
          <>admission: its debounce window closed at {formatClock(flow.not_before)}</>
        )}
        {priority}
        {paused ? <span className="muted"> · paused: it keeps its place and is not admitted until it is resumed</span> : null}
      </dd>
    </>
  );
}
