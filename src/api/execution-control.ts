import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { MAX_CONTROL_REASON_CHARS } from '../protocol.ts';
import { pauseExecution, resumeExecution, type Control } from '../waits/pause-execution.ts';
import { MAX_KEPT_SIGNAL_BYTES, MAX_KEPT_SIGNALS } from '../../actors/route-report.ts';
import { signalExecution, type Signalled } from '../waits/signal-execution.ts';
import { integer, REPLAYED_HEADER_DOC, responses, withAnswerHeaders } from './answers.ts';
import { IDEMPOTENCY_KEY_HEADER, IdempotentStarts } from './idempotent-starts.ts';
import { exactObject, integerText, jsonSchema, MAX_ID } from './validation.ts';

// Control of a running execution (DESIGN.md "Waiting and control"): pause, resume and signals.
// Cancel and retry are with the other execution routes (executions.ts).

const idParams = v.object({ id: integerText(1, MAX_ID) });
const signalParams = v.object({
  id: integerText(1, MAX_ID),
  name: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'must be a signal name (letters, digits, _ . -)'), v.maxLength(128)),
});
const signalBody = v.optional(exactObject({ payload: v.optional(v.unknown()) }), {});
/** A pause or resume's body: its reason, recorded in the event's context (as a cancel's); any other field is refused. */
const controlBody = v.optional(exactObject({ reason: v.optional(v.pipe(v.string(), v.maxLength(MAX_CONTROL_REASON_CHARS))) }), {});
const SIGNAL_ACCEPTED = 202;
const controlAnswer = v.object({ execution_id: integer, status: v.picklist(['paused', 'running', 'queued']) }) satisfies v.GenericSchema<unknown, Control>;
const signalAnswer = v.object({
  status: v.picklist(['delivered', 'buffered']),
  execution_id: integer,
  signal: v.string(),
  step: v.pipe(v.string(), v.description('the step it ended, or (buffered) the step that will take it')),
  event_id: integer,
}) satisfies v.GenericSchema<unknown, Signalled>;

/** Pause, resume and signal routes. */
export async function executionControlRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const signals = new IdempotentStarts(deps, SIGNAL_ACCEPTED);
  const keyHeader = { type: 'object', properties: { [IDEMPOTENCY_KEY_HEADER.toLowerCase()]: { type: 'string', description: 'Optional: the same key and body again to this execution and signal name is the same signal (answered as the first), for at least 24 h; another body is 422 (idempotency_key_reused). To another execution or signal name it is another signal.' } } };

  app.post(
    '/api/executions/:id/pause',
    {
      schema: {
        tags: ['executions'],
        summary: 'Pause a running or queued execution: no new command is issued until it is resumed',
        description: 'Event `execution.paused` (context `requested_by`, and `reason` when given); status `paused`. Commands already out finish and are recorded; timers that come due wait for the resume. A queued execution (flow control) keeps its place in the queue and is not admitted until it is resumed. 409 (not_waiting) unless the execution is running or queued.',
        params: jsonSchema(idParams),
        body: jsonSchema(controlBody),
        response: responses({ 200: controlAnswer }),
      },
      config: { access: { level: 'operator' } },
    },
    async (req) => pauseExecution(deps, (req.params as v.InferOutput<typeof idParams>).id, req.identity ?? undefined, ((req.body ?? {}) as v.InferOutput<typeof controlBody>).reason),
  );

  app.post(
    '/api/executions/:id/resume',
    {
      schema: {
        tags: ['executions'],
        summary: 'Resume a paused execution where it stopped',
        description: 'Event `execution.resumed` (context `requested_by`, and `reason` when given): the commands held while paused are issued, due timers fire; one paused while queued is `queued` again in its place (or admitted when its key has room). 409 (not_waiting) unless the execution is paused.',
        params: jsonSchema(idParams),
        body: jsonSchema(controlBody),
        response: responses({ 200: controlAnswer }),
      },
      config: { access: { level: 'operator' } },
    },
    async (req) => resumeExecution(deps, (req.params as v.InferOutput<typeof idParams>).id, req.identity ?? undefined, ((req.body ?? {}) as v.InferOutput<typeof controlBody>).reason),
  );

  app.post(
    '/api/executions/:id/signals/:name',
    {
      schema: {
        tags: ['executions'],
        summary: 'Send a signal to an execution: the step waiting for it moves on with its payload',
        description:
          'Answers 202 `{status: delivered}` (of the steps waiting for the signal, the one that has waited longest among those whose `approval.roles` admit the caller takes it; its arcs read `signal.payload` and `signal.by`) or `{status: buffered}` ' +
          '(no step waits yet, and one still ahead says `buffer: true`: the nearest, by arcs from the steps that run now, that admits the caller). 409 (not_waiting) when no step waits for it and none ahead keeps it (one the execution left behind, no arc leading back, would never take it); ' +
          `409 (signal_buffer_full, nothing stored) when it would be kept and the execution keeps ${MAX_KEPT_SIGNALS} signals no step has taken already, ` +
          `or their payloads and this one's would come to over ${MAX_KEPT_SIGNAL_BYTES} bytes (1 MiB) as JSON; ` +
          '403 when the `approval.roles` of every step waiting for it (or, none waiting, of every step that would keep it) exclude the caller ' +
          '(a step without approval takes signals from operators). `Idempotency-Key` makes a repeat to this execution and signal name the same signal.',
        params: jsonSchema(signalParams),
        body: jsonSchema(signalBody),
        headers: keyHeader,
        response: withAnswerHeaders(responses({ [SIGNAL_ACCEPTED]: signalAnswer }), SIGNAL_ACCEPTED, REPLAYED_HEADER_DOC),
      },
      // The step decides who may send it (approval roles); viewers only where a step names them.
      config: { access: { level: 'viewer' } },
    },
    async (req, reply) => {
      const { id, name } = req.params as v.InferOutput<typeof signalParams>;
      const body = (req.body ?? {}) as v.InferOutput<typeof signalBody>;
      reply.code(SIGNAL_ACCEPTED);
      const payload = body.payload ?? null;
      // No body, `{}` and `{"payload": null}` are one signal without a payload: compared as such.
      return signals.answer(req, reply, (claim) => signalExecution(deps, id, name, payload, req.identity ?? undefined, claim), { payload });
    },
  );
}
