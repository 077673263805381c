import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { httpAnswerOf, RETRY_AFTER_SECONDS, ServiceError, type ErrorCode } from '../errors.ts';
import { discardBody } from './input-guard.ts';

/** Sends `{detail}` with the status of `code`; a 503 also says when to try again. */
function answer(reply: FastifyReply, code: ErrorCode, detail: unknown): FastifyReply {
  const status = httpAnswerOf(code).status;
  if (status === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  return reply.code(status).send({ detail });
}

/**
 * The edge: domain errors (ServiceError, by the registry in machines/error-codes.ts) and fastify's own client
 * errors become `{"detail": ...}` answers; anything else is a 500 whose details stay in the log.
 * Never a stack trace.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(async (err: FastifyError | ServiceError | Error, req, reply) => {
    if (err instanceof ServiceError) {
      if (httpAnswerOf(err.code).status >= 500) {
        const cause = err.cause instanceof Error ? err.cause.message : undefined;
        req.log.warn({ code: err.code, cause }, err.message);
      }
      return answer(reply, err.code, err.detail);
    }
    const status = 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status === 413) {
      // The client may still be sending: read the rest, so it is listening when the answer comes.
      await discardBody(req.raw);
      return answer(reply, 'payload_too_large', httpAnswerOf('payload_too_large').message);
    }
    // fastify's own client errors (bad JSON, bad content type, bad URL): their messages describe
    // the request, not our internals.
    if (status < 500) return reply.code(status).send({ detail: err.message });
    req.log.error({ err: { message: err.message, name: err.name, stack: err.stack } }, 'unhandled error');
    return answer(reply, 'internal', httpAnswerOf('internal').message);
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ detail: `route not found: ${req.method} ${req.url.split('?')[0]}` });
  });
}

/**
 * fastify's `frameworkErrors` option: errors it meets before routing (a path whose
 * percent-encoding is not UTF-8) are answered like the others, `{"detail": ...}`.
 */
export function answerFrameworkError(err: FastifyError, _req: unknown, reply: FastifyReply): void {
  const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
  reply.code(status).send({ detail: err.message });
}
