import { isLiveExecutionStatus } from './statuses.ts';
import { EVENT } from './event-types.ts';
import type { ExecutionView } from './execution-view.ts';
import type { ExecutionEvent } from './execution/types.ts';

// The wire format of @statelyai/inspect (its StatelyInspectionEvent, version below): what its
// WebSocket receiver and Stately's inspector read. Snapshots carry the execution's view (step
// statuses, loop progress) as their context, never the payload, vars or results.

/** The @statelyai/inspect format version these events follow. */
export const INSPECT_FORMAT_VERSION = '0.7.2';

/**
 * `execution_status`: the execution's status as the API answers it. A pause and flow control's
 * queue are flags of the machine's context, not states: its `value` stays `running` through them.
 */
export type InspectedSnapshot = { status: 'active' | 'done'; value: unknown; context: ExecutionView['steps'] & object; execution_status: string };
export type InspectionEvent =
  | { type: '@xstate.actor'; name: string; sessionId: string; rootId: string; parentId: string | undefined; definition: string; snapshot: InspectedSnapshot; id: null; createdAt: string; _version: string }
  | { type: '@xstate.event'; sessionId: string; rootId: string; sourceId: string | undefined; event: Record<string, unknown> & { type: string }; id: null; createdAt: string; _version: string }
  | { type: '@xstate.snapshot'; sessionId: string; rootId: string; event: Record<string, unknown> & { type: string }; snapshot: InspectedSnapshot; id: null; createdAt: string; _version: string };

/** The inspector's session id of an execution. */
export const sessionIdOf = (executionId: number): string => `execution-${executionId}`;

/** An input event as the inspector shows it: type, seq and task statuses, no task data. */
export function inspectedEvent(ev: ExecutionEvent | { type: typeof EVENT.executionStarted }): Record<string, unknown> & { type: string } {
  switch (ev.type) {
    case EVENT.commandCompleted:
      return { type: ev.type, seq: ev.seq, tasks: Object.fromEntries(Object.entries(ev.tasks).map(([k, t]) => [k, t.status])) };
    case EVENT.commandFailed:
      return { type: ev.type, seq: ev.seq, error: ev.error.message };
    case EVENT.childFinished:
      return { type: ev.type, seq: ev.seq, child_execution_id: ev.child_execution_id, status: ev.status };
    case EVENT.executionCancelled:
      return { type: ev.type, reason: ev.reason };
    default:
      return { type: ev.type };
  }
}

type Session = { executionId: number; rootExecutionId: number; parentExecutionId: number | null };

function base(s: Session, nowMs: number) {
  return { sessionId: sessionIdOf(s.executionId), rootId: sessionIdOf(s.rootExecutionId), id: null, createdAt: String(nowMs), _version: INSPECT_FORMAT_VERSION };
}

const inspected = (view: ExecutionView): InspectedSnapshot => ({ status: isLiveExecutionStatus(view.status) ? 'active' : 'done', value: view.value, context: view.steps, execution_status: view.status });

/** The actor event that opens an execution's session, with its statechart as the definition. */
export function actorEvent(s: Session, name: string, statechartJson: string, view: ExecutionView, nowMs: number): InspectionEvent {
  return { type: '@xstate.actor', ...base(s, nowMs), name, parentId: s.parentExecutionId === null ? undefined : sessionIdOf(s.parentExecutionId), definition: statechartJson, snapshot: inspected(view) };
}

/** The event and snapshot events of one folded log row. */
export function stepEvents(s: Session, ev: ExecutionEvent | { type: typeof EVENT.executionStarted }, view: ExecutionView, nowMs: number): InspectionEvent[] {
  const event = inspectedEvent(ev);
  return [
    { type: '@xstate.event', ...base(s, nowMs), sourceId: undefined, event },
    { type: '@xstate.snapshot', ...base(s, nowMs), event, snapshot: inspected(view) },
  ];
}
