import { EXECUTION_STATUSES, isLiveExecutionStatus } from '../../machines/statuses.ts';
import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import { ExecutionFollower, followExecution, loadAppliedEvents } from '../../actors/execution-state.ts';
import { EVENT } from '../../machines/event-types.ts';
import { actorEvent, stepEvents, type InspectionEvent } from '../../machines/inspection-events.ts';
import { compileStatechart } from '../../machines/playbook-statechart.ts';
import { waitUnlessAborted } from '../abortable-wait.ts';
import type { AppDeps } from '../app-deps.ts';
import { getExecution, type ExecutionRow } from '../db/execution.repo.ts';
import { readExecutionWakes } from '../db/wait.repo.ts';
import { notFound } from '../errors.ts';
import { integer, responses, time } from './answers.ts';
import { watchCaller } from './auth.ts';
import { integerText, jsonSchema, MAX_ID } from './validation.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

const idParams = v.object({ id: integerText(1, MAX_ID) });

// StepView (machines/execution-view.ts) with its wait's wake_at.
const stepAnswer = v.object({
  status: v.picklist(['pending', 'active', 'waiting', 'completed', 'failed', 'skipped', 'cancelled']),
  loop: v.optional(v.object({ length: integer, done: integer, in_flight: integer, mode: v.picklist(['sequential', 'parallel']), max_in_flight: integer })),
  outcome: v.optional(v.object({ status: v.picklist(['ok', 'error', 'timeout']), error: v.nullable(v.looseObject({ message: v.string(), code: v.optional(v.string()) })) })),
  wait: v.optional(
    v.object({
      kind: v.picklist(['timer', 'signal']),
      signal: v.nullable(v.string()),
      approval_roles: v.nullable(v.array(v.string())),
      wake_at: v.nullable(time),
      since: v.pipe(time, v.description('when the step began to wait (its wait row was written)')),
      for: v.optional(v.pipe(v.literal('retry'), v.description('the step waits for its `playbook` task\'s next attempt (the retry\'s delay), not for a `wait` of its own'))),
      task: v.optional(v.pipe(v.string(), v.description('with `for`: the task to retry'))),
      attempt: v.optional(v.pipe(integer, v.description('with `for`: the attempt it starts'))),
    }),
  ),
  replayed: v.optional(v.pipe(integer, v.description('how many of its runs took the outcome the execution it retries (`retry_of`), or the one auto-resume restarted as it (`resumed_from`), recorded instead of running (event `step.replayed`); absent when none did'))),
  held: v.optional(v.pipe(integer, v.description('of a paused execution: how many of the step\'s commands and child starts the pause holds (decided while paused, issued once resumed)'))),
  held_children: v.optional(v.pipe(integer, v.description('of `held`, the child executions (a `playbook` task\'s) the resume starts; absent when none'))),
});
const stateAnswer = v.object({
  execution_id: integer,
  path: v.string(),
  catalog_id: integer,
  status: v.picklist(EXECUTION_STATUSES),
  value: v.pipe(v.unknown(), v.description('the statechart state value')),
  active_steps: v.array(v.string()),
  steps: ownKeysRecord(v.string(), stepAnswer),
  step_order: v.pipe(
    v.array(v.string()),
    v.description("the playbook's steps in its order: `steps` is an object, whose keys a JSON reader need not keep in order (JavaScript's puts a name like `2` before every other)"),
  ),
  pending_commands: integer,
  kept_signals: v.pipe(
    v.array(v.object({ signal: v.string(), by: v.nullable(v.string()) })),
    v.description('signals sent while no step waited for them, kept for a step that says `buffer: true` (each name\'s oldest first; no payloads): a step that waits for one later takes the oldest its approval admits. Of a finished execution, those no step took'),
  ),
  last_event_id: integer,
});
// InspectionEvent (machines/inspection-events.ts): the @statelyai/inspect format, open-ended.
const inspectAnswer = v.object({
  events: v.array(v.looseObject({ type: v.picklist(['@xstate.actor', '@xstate.event', '@xstate.snapshot']), sessionId: v.string(), rootId: v.string(), createdAt: v.string(), _version: v.string() })),
});

// RFC 6455 7.4.1: the stream ends because its caller may no longer have it.
const WS_POLICY_VIOLATION = 1008;

/** How often a live inspection reads an execution's new events. */
export const INSPECT_POLL_INTERVAL_MS = 250;

/** The inspection events of an execution so far: its actor, then an event and a snapshot per folded row. */
function inspectionSoFar(row: ExecutionRow, follower: ExecutionFollower, steps: ReturnType<ExecutionFollower['fold']>): InspectionEvent[] {
  const session = { executionId: row.execution_id, rootExecutionId: row.root_execution_id, parentExecutionId: row.parent_execution_id };
  const out: InspectionEvent[] = [];
  const now = Date.now();
  for (const s of steps) {
    if (!s.view) continue;
    if (s.event.type === EVENT.executionStarted) out.push(actorEvent(session, row.path, JSON.stringify(compileStatechart(follower.compiled.playbook)), s.view, now));
    else out.push(...stepEvents(session, s.event, s.view, now));
  }
  return out;
}

/** The live state of an execution and its inspection stream (the @statelyai/inspect format). */
export async function executionStateRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await app.register(websocket);

  app.get(
    '/api/executions/:id/state',
    {
      schema: {
        tags: ['executions'],
        summary: 'Live snapshot of an execution: the statechart state value, active steps, each step status and loop progress',
        description:
          'Hydrated from the event log through the playbook statechart. `steps.<name>.status` is pending, active, waiting (with `wait`: kind, signal, approval_roles, wake_at, since), completed, failed, skipped or cancelled. ' +
          'A step whose `playbook` task runs its child is active, under its timeout_seconds too; one between attempts of its `retry` is waiting, its `wait` saying `for: retry`, `task` and `attempt` (the next one). `replayed`: how many of the step\'s runs a retry took from the execution it retries instead of running them. `kept_signals`: signals kept for a step that says `buffer: true`, not taken yet. No payload, vars or results.',
        params: jsonSchema(idParams),
        response: responses({ 200: stateAnswer }),
      },
      config: { access: { level: 'viewer' } },
    },
    async (req) => {
      const { id } = req.params as v.InferOutput<typeof idParams>;
      // The row and its wait rows in one read: the log is folded up to that row, so the view and
      // the wake-up times are of one moment.
      const read = await readExecutionWakes(deps.db, id);
      const follower = read && (await followExecution(deps.db, deps.cache, read.row));
      const view = follower?.view();
      if (!read || !follower || !view) throw notFound(`execution ${id}`);
      // A waiting step's wake-up time and since when it waits are its wait row's (the machine knows
      // what it waits for, not when). A row not there is a moment between two reads: now.
      const wakeOf = (name: string) => {
        const w = read.wakes.get(name);
        return { wake_at: w?.wakeAt?.toISOString() ?? null, since: (w?.since ?? new Date()).toISOString() };
      };
      const steps = Object.fromEntries(Object.entries(view.steps).map(([name, s]) => [name, s.wait ? { ...s, wait: { ...s.wait, ...wakeOf(name) } } : s]));
      // Kept signals are in the machine's context only: no step shows them, and one never taken ends with the execution.
      const kept = Object.entries(follower.snapshot?.context.signals ?? {}).flatMap(([signal, sent]) => sent.map((s) => ({ signal, by: s.by })));
      return { execution_id: id, path: read.row.path, catalog_id: read.row.catalog_id, ...view, steps, step_order: follower.compiled.playbook.workflow.map((s) => s.step), status: read.row.status, kept_signals: kept, last_event_id: follower.lastEventId };
    },
  );

  app.route({
    method: 'GET',
    url: '/api/executions/:id/inspect',
    schema: {
      tags: ['executions'],
      summary: 'Inspection events of an execution (@statelyai/inspect format)',
      description:
        'As a WebSocket: one JSON text message per inspection event (@xstate.actor with the statechart, then @xstate.event and @xstate.snapshot per event), live until the execution ends (closed with 1000), or until the caller\'s API token is revoked or expires (closed with 1008 naming why, within 6 s; through the gateway, also when the session or bearer JWT ends); readable by @statelyai/inspect createWebSocketReceiver. As plain GET: the events so far, `{ "events": [...] }`.',
      params: jsonSchema(idParams),
      response: responses({ 200: inspectAnswer }),
    },
    config: { access: { level: 'viewer' } },
    handler: async (req) => {
      const { id } = req.params as v.InferOutput<typeof idParams>;
      const row = await getExecution(deps.db, id);
      if (!row) throw notFound(`execution ${id}`);
      const follower = new ExecutionFollower(await deps.cache.get(deps.db, row.catalog_id));
      return { events: inspectionSoFar(row, follower, follower.fold(await loadAppliedEvents(deps.db, row, 0), true)) };
    },
    wsHandler: (socket, req) => {
      const { id } = req.params as v.InferOutput<typeof idParams>;
      let closed = false;
      // Ends the wait for the next poll (and the caller's checks) when the client goes away.
      const gone = new AbortController();
      socket.on('close', () => {
        closed = true;
        gone.abort();
      });
      // A caller whose token is revoked or expires meanwhile is not served on: 1008 says why.
      watchCaller(app, req, gone.signal).then(
        (lapse) => {
          if (lapse === undefined || closed) return;
          closed = true;
          gone.abort();
          socket.close(WS_POLICY_VIOLATION, lapse);
        },
        (err: unknown) => {
          req.log.warn({ err }, 'inspection stream: the caller could not be checked');
          if (!closed) socket.close(1011, 'inspection stopped');
        },
      );
      const send = (events: InspectionEvent[]) => {
        for (const e of events) if (!closed) socket.send(JSON.stringify(e));
      };
      const run = async () => {
        let current = await getExecution(deps.db, id);
        if (!current) {
          socket.close(4404, `execution ${id} not found`);
          return;
        }
        const follower = new ExecutionFollower(await deps.cache.get(deps.db, current.catalog_id));
        for (;;) {
          send(inspectionSoFar(current, follower, follower.fold(await loadAppliedEvents(deps.db, current, follower.lastEventId), true)));
          if (closed) return;
          if (!isLiveExecutionStatus(current.status) && current.applied_event_id <= follower.lastEventId) {
            socket.close(1000, `execution ${current.status}`);
            return;
          }
          if (!(await waitUnlessAborted(INSPECT_POLL_INTERVAL_MS, gone.signal))) return;
          const next = await getExecution(deps.db, id);
          if (closed) return;
          // Deleted meanwhile (retention): nothing more to follow, and the client is told so.
          if (!next) {
            socket.close(4404, `execution ${id} not found`);
            return;
          }
          current = next;
        }
      };
      run().catch((err: unknown) => {
        req.log.warn({ err }, 'inspection stream stopped');
        if (!closed) socket.close(1011, 'inspection stopped');
      });
    },
  });
}
