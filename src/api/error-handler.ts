import type { FastifyError, FastifyInstance } from 'fastify';
import { ServiceError } from '../errors.ts';

/** The one error handler: `{"detail": ...}` bodies, the registry's statuses, never a stack trace. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ServiceError | Error, req, reply) => {
    if (err instanceof ServiceError) {
      if (err.statusCode >= 500) req.log.warn({ code: err.code }, err.message);
      return reply.code(err.statusCode).send({ detail: err.detail });
    }
    const status = 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status < 500) {
      // fastify's own client errors (bad JSON, body too large, bad content type): their messages
      // describe the request, not our internals.
      const detail = status === 413 ? 'request body is too large' : err.message;
      return reply.code(status).send({ detail });
    }
    req.log.error({ err: { message: err.message, name: err.name, stack: err.stack } }, 'unhandled error');
    return reply.code(500).send({ detail: 'internal error; the server log has the details' });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ detail: `route not found: ${req.method} ${req.url.split('?')[0]}` });
  });
}
