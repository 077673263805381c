import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { databaseNow } from '../waits/wait-clock.ts';
import { stampReportedTimes, withoutReportedAges } from './reported-times.ts';
import { workerName } from './worker-name.ts';
import * as v from 'valibot';
import { BatchAcceptor } from '../../actors/batch-accept.ts';
import { BATCH_STATES, isTerminalBatchState, type BatchState } from '../../machines/batch-request.machine.ts';
import { EVENT, WORKER_EVENT_TYPES } from '../../machines/event-types.ts';
import { waitUnlessAborted } from '../abortable-wait.ts';
import type { AppDeps } from '../app-deps.ts';
import { getBatchStatus, type BatchStatusRow } from '../db/batch.repo.ts';
import { isDatabaseUnavailable } from '../db/classify-database-error.ts';
import { ServiceError, notFound } from '../errors.ts';
import { integer, REPLAYED_HEADER_DOC, responses, time, withAnswerHeaders } from './answers.ts';
import { MAX_STEP_NAME_CHARS } from '../dsl/step-name-limit.ts';
import { jsonObject } from './executions.ts';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, idempotencyKeyOf, keyScope, requestHash } from './idempotent-starts.ts';
import { discardBody } from './input-guard.ts';
import { exactObject, integerIn, jsonSchema, MAX_ID, MAX_INT4 } from './validation.ts';
import { watchCaller } from './auth.ts';

/** A stream whose state has not changed for this long sends an SSE comment, so proxies keep it open. */
const STREAM_KEEPALIVE_MS = 15_000;

// Bounded as POST /api/events bounds them: `1e300` is an integer to JavaScript that no bigint
// column holds (it was a 503 "retry", or a 202 whose processing then failed).
const id = integerIn(1, MAX_ID);
// What a worker may report, from the registry: a 422 names the item's type otherwise (an
// execution is cancelled by POST /api/executions/{id}/cancel, which records who asked). An item
// has these fields and no other: a misspelt `atempt` was dropped (the report then refused as
// not the claim holder's, after the 202). An item shaped as a POST /api/events body may repeat
// the batch's `execution_id` and `worker_id`; another execution's is refused (batchOwnerProblems:
// a batch is of one execution, and its items went to the body's).
const batchItem = exactObject({
  execution_id: v.optional(id),
  worker_id: v.optional(v.nullable(workerName)),
  event_type: v.picklist(WORKER_EVENT_TYPES, (issue) => `${issue.received} is not a type a worker reports; must be one of ${WORKER_EVENT_TYPES.join(', ')}${issue.input === EVENT.executionCancelled ? ' (cancel by POST /api/executions/{id}/cancel)' : ''}`),
  command_id: v.optional(v.nullable(id)),
  attempt: v.optional(v.nullable(integerIn(0, MAX_INT4))),
  // As long as a step name a request may name: a shorter bound refused every report of such a step.
  step: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(MAX_STEP_NAME_CHARS)))),
  context: v.optional(v.nullable(jsonObject)),
  result: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
});
// Documents the header; idempotencyKeyOf checks it (as for starts).
const keyHeader = {
  type: 'object',
  properties: {
    [IDEMPOTENCY_KEY_HEADER.toLowerCase()]: {
      type: 'string',
      description:
        'Optional, 1 to 255 printable ASCII characters (the request id when absent). The same key with the same body (its events\' context.ago_ms aside: they are written at each send) answers with the first 202 ' +
        '(duplicate: true) for 48 h after the batch finished, storing nothing; with another body it is refused (422, code idempotency_key_reused). Scoped to the route and the caller.',
    },
  },
};
const requestParams = v.object({ request_id: v.string() });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The spec types them: event_ids an integer array, commands_generated and queue_depth integers.
const acceptedAnswer = v.object({
  status: v.literal('accepted'),
  request_id: v.string(),
  event_ids: v.array(integer),
  commands_generated: integer,
  queue_depth: integer,
  duplicate: v.boolean(),
  idempotency_key: v.string(),
});
const statusAnswer = v.object({
  request_id: v.string(),
  execution_id: integer,
  // The POST's answer names the batch's state `status` (accepted); so does this one, beside `state`.
  status: v.picklist(BATCH_STATES),
  state: v.picklist(BATCH_STATES),
  error_code: v.nullable(v.string()),
  message: v.nullable(v.string()),
  commands_generated: integer,
  idempotency_key: v.string(),
  updated_at: time,
});

/** Asynchronous batch intake: POST a batch (202), its status, and a stream of its state changes. */
export async function batchRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { config } = deps;
  const maxEvents = config.SVC_BATCH_MAX_EVENTS;
  const maxBytes = config.SVC_BATCH_MAX_BYTES;
  // As its items, no field beside these (a misspelt `worker` was dropped, the reports then refused).
  const batchBody = exactObject({
    execution_id: id,
    worker_id: v.optional(v.nullable(workerName)),
    events: v.pipe(
      v.array(batchItem),
      v.minLength(1, 'must hold at least one event'),
      v.maxLength(maxEvents, `must hold at most ${maxEvents} events (SVC_BATCH_MAX_EVENTS)`),
    ),
  });
  const acceptor = new BatchAcceptor(deps);
  // In the background: a database slow to answer must not hold up readiness (health answers then).
  app.addHook('onReady', async () => {
    void acceptor.warm();
  });

  app.post(
    '/api/events/batch',
    {
      config: { access: { level: 'operator', worker: true }, bodyTooLarge: `the batch body is longer than ${maxBytes} bytes, the most SVC_BATCH_MAX_BYTES allows` },
      bodyLimit: maxBytes,
      // Refused before the body is parsed when its declared length is over the limit; what the
      // client still sends is read and dropped first, so one that writes it all before reading
      // gets the 413, not a reset connection (as fastify's own 413: src/api/error-handler.ts).
      onRequest: async (req) => {
        const length = Number(req.headers['content-length']);
        if (!(length > maxBytes)) return; // no Content-Length (chunked): bodyLimit bounds it as it is read
        await discardBody(req.raw);
        throw new ServiceError('payload_too_large', `the batch body is ${length} bytes; at most ${maxBytes} (SVC_BATCH_MAX_BYTES)`);
      },
      schema: {
        tags: ['events'],
        summary: 'Accept a batch of worker events for asynchronous routing (202)',
        description:
          `Stores the events and a batch.accepted marker and enqueues their processing in one statement (one commit), then answers 202. ` +
          `At most ${maxEvents} events (422 beyond) and ${maxBytes} bytes (413 beyond). The same Idempotency-Key with the same ` +
          `body answers the first 202 again with duplicate: true; with another body 422. 503 ack_timeout, queue_unavailable ` +
          `or enqueue_error (with Retry-After) store nothing.`,
        headers: keyHeader,
        body: jsonSchema(batchBody),
        response: withAnswerHeaders(responses({ 202: acceptedAnswer }), 202, { location: 'the status of the batch: /api/events/batch/{request_id}/status', ...REPLAYED_HEADER_DOC }),
      },
    },
    async (req, reply) => {
      const body = req.body as v.InferOutput<typeof batchBody>;
      const strangers = batchOwnerProblems(body);
      if (strangers.length) throw new ServiceError('unprocessable', { message: 'invalid body', errors: strangers });
      const key = idempotencyKeyOf(req.headers, req.raw.headersDistinct) ?? null;
      const answer = await acceptor.accept({
        execution_id: body.execution_id,
        worker_id: body.worker_id ?? null,
        // Stored as the batch's items: their repeats of the batch's ids checked above, dropped.
        events: stampReportedTimes(body.events.map(({ execution_id: _execution, worker_id: _worker, ...item }) => item), databaseNow(deps)),
        key_scope: keyScope(req),
        idempotency_key: key,
        // Its ages are when it was sent, written afresh at each send: the same batch sent again
        // with its key, after a 503 or a lost answer, is the same request.
        body_hash: requestHash({ ...body, events: withoutReportedAges(body.events) }),
      });
      if (answer.duplicate) reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
      // A 202 points at where the outcome will be (RFC 9110, 15.3.3): the batch's status.
      return reply.code(202).header('location', batchStatusUrl(answer.request_id)).send(answer);
    },
  );

  app.get(
    '/api/events/batch/:request_id/status',
    {
      config: { access: { level: 'viewer', worker: true } },
      schema: { tags: ['events'], summary: 'State of an accepted batch (`status`, also `state`): accepted, processing, completed or failed', params: jsonSchema(requestParams), response: responses({ 200: statusAnswer }) },
    },
    async (req) => presentStatus(await findBatch(deps, (req.params as v.InferOutput<typeof requestParams>).request_id)),
  );

  app.get(
    '/api/events/batch/:request_id/stream',
    {
      config: { access: { level: 'viewer', worker: true } },
      schema: {
        tags: ['events'],
        summary: 'Server-sent events: the batch status object at each state change, until a terminal state',
        description: `The server polls the state every SVC_BATCH_STATUS_STREAM_POLL_SECONDS (${config.SVC_BATCH_STATUS_STREAM_POLL_SECONDS} s); each message is "event: status" with the status object as data. The stream ends after completed or failed; it stays open while the database is away (a poll that fails is asked again at the next). It also ends, within 6 s, once the caller's API token is revoked or expires (through the gateway, once the session or bearer JWT ends), its last line \`: closed: <why>\`.`,
        params: jsonSchema(requestParams),
        response: {
          ...responses({ 200: { mediaType: 'text/event-stream', schema: v.string(), description: 'Messages `event: status` whose data is the status object (as GET …/status answers it), `: keep-alive` comments, and a last `: closed: <why>` when the caller may no longer read it. Each message\'s `id` is its state\'s place (1 accepted, 2 processing, 3 completed, 4 failed), the same on every connection' } }),
          // type null: no body, so the document lists no media type for it.
          204: { type: 'null', description: 'A reconnection (Last-Event-ID) that saw the final state already: nothing more will come, and an EventSource stops reconnecting' },
        },
      },
    },
    async (req, reply) => {
      const first = await findBatch(deps, (req.params as v.InferOutput<typeof requestParams>).request_id);
      // A browser's EventSource reconnects whenever a stream ends, for ever; one that saw the final
      // state (its Last-Event-ID) gets 204, the HTML standard's way to stop it.
      if (isTerminalBatchState(first.state) && req.headers['last-event-id'] === String(stateId(first.state))) return reply.code(204).send();
      // Polling stops when the client goes away (the response closes) or the server closes.
      const gone = new AbortController();
      reply.raw.on('close', () => gone.abort());
      const signal = AbortSignal.any([gone.signal, app.closingSignal]);
      // A caller whose token is revoked or expires meanwhile is not served on: the stream ends,
      // its last line a comment saying why.
      const lapsed = new AbortController();
      let lapse: string | undefined;
      watchCaller(app, req, signal).then(
        (why) => {
          lapse = why;
          if (why !== undefined) lapsed.abort();
        },
        (err: unknown) => {
          req.log.warn({ err }, 'batch status stream: the caller could not be checked');
          lapse = 'the caller could not be checked';
          lapsed.abort();
        },
      );
      async function* answer(): AsyncGenerator<string> {
        yield* statusStream(deps, first, AbortSignal.any([signal, lapsed.signal]));
        if (lapse !== undefined) yield `: closed: ${lapse}\n\n`;
      }
      reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache').header('x-accel-buffering', 'no');
      return reply.send(Readable.from(answer(), { objectMode: false }));
    },
  );
}

/** Where GET answers the state of batch `requestId`. */
const batchStatusUrl = (requestId: string) => `/api/events/batch/${requestId}/status`;

async function findBatch(deps: AppDeps, requestId: string): Promise<BatchStatusRow> {
  const row = UUID.test(requestId) ? await getBatchStatus(deps.db, requestId) : undefined;
  if (!row) throw notFound(`batch request ${requestId}`);
  return row;
}

/**
 * The SSE messages of one stream: the state now, then each change seen by a poll every
 * SVC_BATCH_STATUS_STREAM_POLL_SECONDS, ending after a terminal state (or when `signal` aborts:
 * the client went away or the server closes; no poll runs after that). A poll that finds the
 * database away changes nothing: the next one asks again.
 */
async function* statusStream(deps: AppDeps, first: BatchStatusRow, signal: AbortSignal): AsyncGenerator<string> {
  const pollMs = deps.config.SVC_BATCH_STATUS_STREAM_POLL_SECONDS * 1000;
  let last = first;
  let sentAt = performance.now();
  yield sseMessage(stateId(first.state), 'status', presentStatus(first));
  while (!isTerminalBatchState(last.state)) {
    if (!(await waitUnlessAborted(pollMs, signal))) return;
    let now: BatchStatusRow | undefined;
    try {
      now = await getBatchStatus(deps.db, first.request_id);
    } catch (err) {
      // The database away for a moment: the stream stays open (keep-alives go on) and the next poll asks again.
      if (!isDatabaseUnavailable(err)) throw err;
      now = last;
    }
    if (!now) return; // dropped after its retention
    if (now.state !== last.state) {
      yield sseMessage(stateId(now.state), 'status', presentStatus(now));
      sentAt = performance.now();
    } else if (performance.now() - sentAt > STREAM_KEEPALIVE_MS) {
      yield ': keep-alive\n\n';
      sentAt = performance.now();
    }
    last = now;
  }
}

/** A status message's id: its state's place in BATCH_STATES, from 1: the same on every connection, so a reconnection says what it saw. */
const stateId = (state: BatchState): number => BATCH_STATES.indexOf(state) + 1;

function sseMessage(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function presentStatus(r: BatchStatusRow): v.InferOutput<typeof statusAnswer> {
  return {
    request_id: r.request_id,
    execution_id: r.execution_id,
    status: r.state,
    state: r.state,
    error_code: r.error_code,
    message: r.message ?? defaultMessage(r.state),
    commands_generated: r.commands_generated,
    idempotency_key: r.idempotency_key,
    updated_at: r.updated_at.toISOString(),
  };
}

function defaultMessage(state: BatchStatusRow['state']): string | null {
  if (state === 'accepted') return 'waiting to be processed';
  if (state === 'processing') return 'routing its events';
  return null;
}

/**
 * An item's own `execution_id` or `worker_id` other than the batch's, named: a batch reports for
 * one execution and one worker, and its items are routed as the batch's.
 */
function batchOwnerProblems(body: { execution_id: number; worker_id?: string | null; events: readonly { execution_id?: number; worker_id?: string | null }[] }): string[] {
  return body.events.flatMap((e, i) => [
    ...(e.execution_id !== undefined && e.execution_id !== body.execution_id ? [`events[${i}].execution_id: must be the batch's execution_id (${body.execution_id}), got ${e.execution_id}: a batch reports for one execution`] : []),
    ...(e.worker_id != null && e.worker_id !== (body.worker_id ?? null) ? [`events[${i}].worker_id: must be the batch's worker_id (${body.worker_id ?? 'none'}), got ${JSON.stringify(e.worker_id)}`] : []),
  ]);
}
