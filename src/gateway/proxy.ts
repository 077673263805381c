// The streaming proxy to the server (undici): request bodies as the gateway read them, response
// bodies piped as they arrive (server-sent events flow unbuffered), and a client that leaves
// aborts the upstream request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import { IDENTITY_HEADER } from '../auth/identity-assertion.ts';
import { ServiceError } from '../errors.ts';

/** Answers up to this size with a Content-Length are read whole before sending, in bytes. */
export const BUFFERED_ANSWER_MAX_BYTES = 256 * 1024;
/** Time to the server's response headers, in ms; bodies (event streams) have no timeout. */
export const UPSTREAM_HEADERS_TIMEOUT_MS = 60_000;

// Hop-by-hop headers (RFC 9110 7.6.1) and what the gateway owns: the browser's cookies and any
// identity header from the client are never passed on.
const DROP_REQUEST = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'cookie', 'content-length', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', IDENTITY_HEADER]);
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'set-cookie']);

export type Forward = {
  /** Replaces (or with null removes) the caller's Authorization header upstream. */
  authorization?: string | null;
  /** Sets the signed identity assertion header. */
  identity?: string;
};

export type Proxy = {
  forward(req: FastifyRequest, reply: FastifyReply, how: Forward): Promise<FastifyReply>;
  /** True when the server answers its health route. */
  reachable(): Promise<boolean>;
  close(): Promise<void>;
};

/** A proxy to `upstream` (an origin; its path, if any, is ignored). */
export function createProxy(upstream: URL): Proxy {
  // No bound on connections: each open event stream holds one for as long as it lasts.
  const pool = new Pool(upstream.origin, { bodyTimeout: 0, headersTimeout: UPSTREAM_HEADERS_TIMEOUT_MS });
  return {
    async forward(req, reply, how) {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(req.headers as IncomingHttpHeaders)) {
        if (value !== undefined && !DROP_REQUEST.has(name)) headers[name] = value;
      }
      if (how.authorization === null) delete headers.authorization;
      else if (how.authorization !== undefined) headers.authorization = how.authorization;
      if (how.identity !== undefined) headers[IDENTITY_HEADER] = how.identity;
      headers['x-forwarded-for'] = req.ip;
      if (req.headers.host) headers['x-forwarded-host'] = req.headers.host;
      headers['x-forwarded-proto'] = req.protocol;
      // A client that leaves (its socket closes before the answer is done) ends the upstream request.
      const leave = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) leave.abort();
      });
      const body = req.body;
      let res;
      try {
        res = await pool.request({
          origin: upstream.origin,
          path: req.url,
          method: req.method as 'GET',
          headers,
          body: Buffer.isBuffer(body) ? body : undefined,
          signal: leave.signal,
        });
      } catch (err) {
        if (leave.signal.aborted) return reply; // nobody is listening
        throw new ServiceError('bad_gateway', undefined, { cause: err });
      }
      reply.code(res.statusCode);
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined && !DROP_RESPONSE.has(name)) reply.header(name, value);
      }
      // A small answer of known length is read whole and sent in one write (cheaper than a pipe);
      // anything else, event streams above all, is piped as it arrives.
      const length = Number(res.headers['content-length']);
      if (Number.isInteger(length) && length <= BUFFERED_ANSWER_MAX_BYTES && !String(res.headers['content-type']).startsWith('text/event-stream')) {
        return reply.send(Buffer.from(await res.body.arrayBuffer()));
      }
      // Swallows the abort error of a stream whose client left; fastify has already answered.
      res.body.on('error', () => {});
      return reply.send(res.body);
    },
    async reachable() {
      try {
        const res = await pool.request({ origin: upstream.origin, path: '/api/health', method: 'GET', signal: AbortSignal.timeout(2_000) });
        await res.body.dump();
        return res.statusCode === 200;
      } catch {
        return false;
      }
    },
    close: () => pool.close(),
  };
}
