import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { cancelledAsUnavailable } from '../db/classify-database-error.ts';
import { httpAnswerOf, RETRY_AFTER_SECONDS, ServiceError, type ErrorCode, type ErrorDetail } from '../errors.ts';
import { NOT_A_PAGE_HEADERS } from '../security-headers.ts';
import { discardBody } from './input-guard.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a 413 says of a body over the route's bodyLimit (naming its setting); else the generic text with the bytes allowed. */
    bodyTooLarge?: string;
  }
}

/** Sends `{detail}` with `status`; a 503 also says when to try again. */
function answer(reply: FastifyReply, status: number, detail: unknown): FastifyReply {
  if (status === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  return reply.code(status).send({ detail });
}

/**
 * The status and `detail` the edge answers an error a handler threw with: a ServiceError's by the
 * registry (machines/error-codes.ts), a statement PostgreSQL cancelled as `database_unavailable`
 * (cancelledAsUnavailable); anything else is a 500 whose details go to `log` only. The
 * routes' error handler and in-process calls (src/in-process-server.ts) answer alike.
 */
export function answerOfError(thrown: unknown, log: Pick<FastifyBaseLogger, 'warn' | 'error'>): { status: number; detail: unknown } {
  const err = cancelledAsUnavailable(thrown);
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
      // Met while reading a body sent without Content-Length (chunked): say what the limit is, as
      // a declared length over it is told (the batch route's onRequest).
      const { status: tooLarge, message } = httpAnswerOf('payload_too_large');
      return answer(reply, tooLarge, req.routeOptions.config.bodyTooLarge ?? `${message}: at most ${req.routeOptions.bodyLimit} bytes`);
    }
    if (status === 415) {
      // fastify's message ('Unsupported Media Type') names no code and not what the API takes.
      const { message } = httpAnswerOf('unsupported_media_type');
      const sent = req.headers['content-type'];
      return answer(reply, 415, { code: 'unsupported_media_type', message: `${message}; got ${sent ? `'${sent.slice(0, 100)}'` : 'none'}` } satisfies ErrorDetail);
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
 * fastify's `frameworkErrors` option: errors it meets before routing are answered like the others,
 * `{"detail": {code, message}}`: a path whose percent-encoding is not UTF-8 (bad_request), a path
 * parameter longer than the router's `maxParamLength` (uri_too_long, with that limit).
 */
export function answerFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  // No route was chosen, so no onSend hook adds the headers every answer carries.
  reply.headers(NOT_A_PAGE_HEADERS);
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const limit = req.server.initialConfig.routerOptions?.maxParamLength;
    const { status, message } = httpAnswerOf('uri_too_long');
    answer(reply, status, { code: 'uri_too_long', message: limit ? `a path parameter is over ${limit} characters once decoded: ${message}` : message, limit } satisfies ErrorDetail);
    return;
  }
  const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
  if (status >= 500) {
    const a = answerOfError(err, req.log);
    answer(reply, a.status, a.detail);
    return;
  }
  // fastify's message names the request's own path, not our internals.
  answer(reply, httpAnswerOf('bad_request').status, { code: 'bad_request', message: err.message } satisfies ErrorDetail);
}

/** What node's HTTP parser refuses before fastify sees a request, by node's error code; anything else it cannot parse is a bad_request. */
const CLIENT_ERROR_CODES: Readonly<Record<string, ErrorCode>> = { HPE_HEADER_OVERFLOW: 'headers_too_large', ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout' };

/**
 * fastify's `clientErrorHandler` option (node's 'clientError' event): a request node's HTTP server
 * refuses before any route (headers over 16 KiB, a timeout, bytes that are not HTTP) is answered
 * in the shape of every other error, with the headers every answer carries, and the connection
 * closed, as node's own answer does: what follows on it cannot be read as a request.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has no one to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const code = CLIENT_ERROR_CODES[err.code ?? ''] ?? 'bad_request';
  const { status, message } = httpAnswerOf(code);
  const body = JSON.stringify({ detail: { code, message: code === 'bad_request' ? 'the request is not valid HTTP' : message } });
  const headers = Object.entries({ ...NOT_A_PAGE_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close' });
  if (socket.writable) socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`);
  socket.destroy(err);
}
