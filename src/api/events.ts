import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import { routeEvents } from '../../actors/route-events.ts';
import { CODE } from '../../machines/error-codes.ts';
import { WORKER_EVENT_TYPES } from '../../machines/event-types.ts';
import type { AppDeps } from '../app-deps.ts';
import { getExecution, loadEventsAfter } from '../db/execution.repo.ts';
import { ServiceError, notFound } from '../errors.ts';
import type { RoutedEvent } from '../protocol.ts';
import { integer, responses } from './answers.ts';
import { emptyQueryValuesAbsent } from './empty-query-values.ts';
import { eventAnswer, presentEvent } from './present.ts';
import { databaseNow } from '../waits/wait-clock.ts';
import { stampReportedTimes } from './reported-times.ts';
import { workerName } from './worker-name.ts';
import { exactObject, integerIn, integerText, jsonSchema, MAX_ID, MAX_INT4, oneOf } from './validation.ts';

export const eventInputSchema = v.object({
  execution_id: integerIn(1, MAX_ID),
  command_id: v.optional(v.nullable(integerIn(1, MAX_ID))),
  attempt: v.optional(v.nullable(integerIn(0, MAX_INT4))),
  // What a worker may report, from the registry; the rest only the engine writes, so a client cannot forge an outcome.
  event_type: oneOf(WORKER_EVENT_TYPES),
  step: v.optional(v.nullable(v.string())),
  context: v.optional(v.unknown()),
  result: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
  worker_id: v.optional(v.nullable(workerName)),
});

// The spec's name for it (GET /api/events/{execution_id}), in the OpenAPI document and a refusal's detail.
const historyParams = v.object({ execution_id: integerText(1, MAX_ID) });
// Exact: a misspelt `since_event_id` answered the log from its start.
const historyQuery = exactObject({
  since_event_id: v.optional(integerText(0, MAX_ID), '0'),
  limit: v.optional(integerText(1, 5000), '1000'),
});
const reportedAnswer = v.object({ status: v.literal('ok'), event_id: integer, commands_generated: integer });
const historyAnswer = v.object({
  execution_id: integer,
  events: v.array(eventAnswer),
  next_since_event_id: v.pipe(integer, v.description('since_event_id of the next page')),
});

/** Converts router results for one synchronous event into the HTTP answer: a refusal with its registry status (409; 400 for unknown_command). */
export function firstResultOrThrow(results: Awaited<ReturnType<typeof routeEvents>>['results']): number {
  const r = results[0];
  if (r.event_id === null) {
    // Only a worker report names itself (`report_id`): a single event is never one sent again.
    if (r.error === CODE.already_reported) throw new Error(`an event that names no report was answered ${r.error}`);
    throw new ServiceError(r.error, { code: r.error, message: r.detail });
  }
  return r.event_id;
}

/** Synchronous event intake and the event history of an execution. */
export async function eventRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.post('/api/events', { schema: { tags: ['events'], summary: 'Report one worker event; routed synchronously', body: jsonSchema(eventInputSchema), response: responses({ 200: reportedAnswer }) }, config: { access: { level: 'worker' } } }, async (req) => {
    const ev = req.body as v.InferOutput<typeof eventInputSchema>;
    const out = await routeEvents(deps, stampReportedTimes([ev satisfies RoutedEvent], databaseNow(deps)));
    return { status: 'ok', event_id: firstResultOrThrow(out.results), commands_generated: out.commands_generated };
  });

  app.get('/api/events/:execution_id', { schema: { tags: ['events'], summary: 'Events of an execution in order', params: jsonSchema(historyParams), querystring: jsonSchema(historyQuery), response: responses({ 200: historyAnswer }) }, config: { access: { level: 'viewer' } }, preValidation: emptyQueryValuesAbsent }, async (req) => {
    const { execution_id: id } = req.params as v.InferOutput<typeof historyParams>;
    const q = req.query as v.InferOutput<typeof historyQuery>;
    if (!(await getExecution(deps.db, id))) throw notFound(`execution ${id}`);
    const rows = await loadEventsAfter(deps.db, id, q.since_event_id, q.limit);
    return {
      execution_id: id,
      events: rows.map(presentEvent),
      next_since_event_id: rows.length ? rows.at(-1)!.event_id : q.since_event_id,
    };
  });
}
