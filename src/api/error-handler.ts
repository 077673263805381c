import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { httpAnswerOf, RETRY_AFTER_SECONDS, ServiceError } from '../errors.ts';
import { discardBody } from './input-guard.ts';

/** Sends `{detail}` with `status`; a 503 also says when to try again. */
function answer(reply: FastifyReply, status: number, detail: unknown): FastifyReply {
  if (status === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  return reply.code(status).send({ detail });
}

/**
 * The status and `detail` the edge answers an error a handler threw with: a ServiceError's by the
 * registry (machines/error-codes.ts); anything else is a 500 whose details go to `log` only. The
 * routes' error handler and in-process calls (src/in-process-server.ts) answer alike.
 */
export function answerOfError(err: unknown, log: Pick<FastifyBaseLogger, 'warn' | 'error'>): { status: number; detail: unknown } {
  if (err instanceof ServiceError) {
    const status = httpAnswerOf(err.code).status;
    if (status >= 500) log.warn({ code: err.code, cause: err.cause instanceof Error ? err.cause.message : undefined }, err.message);
    return { status, detail: err.detail };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  log.error({ err: { message: e.message, name: e.name, stack: e.stack } }, 'unhandled error');
  return { status: httpAnswerOf('internal').status, detail: httpAnswerOf('internal').message };
}

/**
 * The edge: domain errors (ServiceError, by the registry in machines/error-codes.ts) and fastify's own client
 * errors become `{"detail": ...}` answers; anything else is a 500 whose details stay in the log.
 * Never a stack trace.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(async (err: FastifyError | ServiceError | Error, req, reply) => {
    if (err instanceof ServiceError) {
      const a = answerOfError(err, req.log);
      return answer(reply, a.status, a.detail);
    }
    const status = 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status === 413) {
      // The client may still be sending: read the rest, so it is listening when the answer comes.
      await discardBody(req.raw);
      return answer(reply, httpAnswerOf('payload_too_large').status, httpAnswerOf('payload_too_large').message);
    }
    // fastify's own client errors (bad JSON, bad content type, bad URL): their messages describe
    // the request, not our internals.
    if (status < 500) return reply.code(status).send({ detail: err.message });
    const a = answerOfError(err, req.log);
    return answer(reply, a.status, a.detail);
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
