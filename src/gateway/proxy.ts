// The streaming proxy to the server (undici): request bodies as the gateway read them, response
// bodies piped as they arrive (server-sent events flow unbuffered), and a client that leaves
// aborts the upstream request. A stream (WebSocket, event stream) ends when its caller's watch
// (caller-watch.ts) says they may no longer be served.
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { ASSERTION_TTL_S, bodyDigest, IDENTITY_HEADER, IDENTITY_REFUSED_HEADER, requestOf } from '../auth/identity-assertion.ts';
import { ServiceError } from '../errors.ts';
import type { CallerWatch } from './caller-watch.ts';

/** Answers up to this size with a Content-Length are read whole before sending, in bytes. */
export const BUFFERED_ANSWER_MAX_BYTES = 256 * 1024;
/** Time to the server's response headers, in ms; bodies (event streams) have no timeout. */
export const UPSTREAM_HEADERS_TIMEOUT_MS = 60_000;

// Hop-by-hop headers (RFC 9110 7.6.1) and what the gateway owns: the browser's cookies and any
// identity header from the client are never passed on. `Expect: 100-continue` (curl's, for any
// body over 1 KiB) was met here (node answered 100 and the body was read whole), and undici
// refuses to send it: passed on, every such request was a 502.
const DROP_REQUEST = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect', 'host', 'cookie', 'content-length', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', IDENTITY_HEADER]);
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'set-cookie', IDENTITY_REFUSED_HEADER]);

/**
 * The headers a Connection header names: hop-by-hop for this message too (RFC 9110 7.6.1), so
 * a proxy removes them, whichever side sent them.
 */
function connectionNamed(connection: string | string[] | undefined): ReadonlySet<string> {
  if (connection === undefined) return new Set();
  return new Set([connection].flat().flatMap((v) => v.split(',')).map((t) => t.trim().toLowerCase()).filter((t) => t !== ''));
}

export type Forward = {
  /** Replaces (or with null removes) the caller's Authorization header upstream. */
  authorization?: string | null;
  /** Sets the identity assertion header: signed for the one request sent upstream (requestOf, bodyDigest). */
  identity?: (request: string, body: string) => string;
};

// WebSocket close codes (RFC 6455 7.4.1): the server refused the handshake, or could not be reached.
const WS_POLICY_VIOLATION = 1008;
const WS_UNREACHABLE = 1011;
// A close reason is at most 123 bytes.
const WS_REASON_MAX_CHARS = 100;
// Codes a close frame may carry (1005, 1006 and 1015 only report what happened locally).
const sendableCode = (code: number): number => ((code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code <= 4999) ? code : 1000);

export type Proxy = {
  /**
   * Proxies `req` to the server as `how` says; an event stream it answers ends, its last line
   * `: closed: <why>`, once `watch` (the caller's) says they may no longer be served.
   */
  forward(req: FastifyRequest, reply: FastifyReply, how: Forward, watch?: CallerWatch): Promise<FastifyReply>;
  /**
   * Relays an accepted WebSocket (`client`) to the same path on the server, messages both ways,
   * until either side closes; a handshake the server refuses closes the client with its status.
   * Once `watch` says the caller may no longer be served, the client is closed with 1008 and why.
   */
  relay(client: WebSocket, req: FastifyRequest, how: Forward, watch?: CallerWatch): void;
  /**
   * GETs `path` on the server as the caller `how` names (no header of the client's), for a check
   * of the gateway's own: the status and the JSON body (null when there is none or it is not JSON).
   */
  read(path: string, how: Forward): Promise<{ status: number; body: unknown }>;
  /** True when the server answers its health route. */
  reachable(): Promise<boolean>;
  close(): Promise<void>;
};

/**
 * The headers the gateway itself sets upstream, over whatever the client sent: the caller's
 * credential (`how`: the client's Authorization kept, replaced or removed; the identity signed
 * for `method` and `target`, the request as sent upstream) and the X-Forwarded-* of the client.
 * `authorization: undefined` means the client's own.
 */
function gatewayHeaders(req: FastifyRequest, how: Forward, method: string, target: string, body?: Buffer): Record<string, string | undefined> {
  return {
    // The client's own: every copy it sent stays (a webhook's bearer signature refuses two).
    ...(how.authorization === undefined ? {} : { authorization: how.authorization ?? undefined }),
    [IDENTITY_HEADER]: how.identity?.(requestOf(method, target), bodyDigest(body)),
    'x-forwarded-for': req.ip,
    'x-forwarded-host': req.headers.host,
    'x-forwarded-proto': req.protocol,
  };
}

/** `headers` with the set values of `extra` over them (an undefined one removes the header). */
function withHeaders<T extends string | string[]>(headers: Record<string, T>, extra: Record<string, string | undefined>): Record<string, T | string> {
  const out: Record<string, T | string> = { ...headers };
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete out[name];
    else out[name] = value;
  }
  return out;
}

/**
 * The server's event stream `body` as sent to the client, ended (its last line a comment saying
 * why, then the upstream request aborted through `leave`) once `watch` says the caller may no
 * longer be served; it stops watching when the answer closes.
 */
function watchedStream(body: Readable, reply: FastifyReply, leave: AbortController, watch: CallerWatch): PassThrough {
  const out = new PassThrough();
  const done = new AbortController();
  reply.raw.once('close', () => done.abort());
  // The server's stream failing ends the client's as it would unwatched; its abort (ours, or the
  // client's leaving) is no failure.
  body.on('error', (err: Error) => {
    if (!leave.signal.aborted) out.destroy(err);
  });
  body.pipe(out);
  const end = (text: string) => {
    body.unpipe(out);
    if (!out.writableEnded) out.end(text);
    leave.abort();
  };
  watch(done.signal).then(
    (lapse) => lapse !== undefined && end(`: closed: ${lapse}\n\n`),
    () => end(': closed: the caller could not be checked\n\n'),
  );
  return out;
}

/** A proxy to `upstream` (an origin; its path, if any, is ignored). */
export function createProxy(upstream: URL): Proxy {
  // No bound on connections: each open event stream holds one for as long as it lasts.
  const pool = new Pool(upstream.origin, { bodyTimeout: 0, headersTimeout: UPSTREAM_HEADERS_TIMEOUT_MS });
  return {
    async forward(req, reply, how, watch) {
      // Every copy of a header as the client sent it (node's merged headers keep only the first
      // Authorization and join other repeats), so the server judges what was really sent.
      const passed: Record<string, string | string[]> = {};
      const hopByHop = connectionNamed(req.headers.connection);
      for (const [name, values] of Object.entries(req.raw.headersDistinct)) {
        if (values !== undefined && !DROP_REQUEST.has(name) && !hopByHop.has(name)) passed[name] = values.length === 1 ? values[0] : values;
      }
      const body = Buffer.isBuffer(req.body) ? req.body : undefined;
      const headers = withHeaders(passed, gatewayHeaders(req, how, req.method, req.url, body));
      // A client that leaves (its socket closes before the answer is done) ends the upstream request.
      const leave = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) leave.abort();
      });
      let res;
      try {
        res = await pool.request({
          origin: upstream.origin,
          path: req.url,
          method: req.method as 'GET',
          headers,
          body,
          signal: leave.signal,
        });
      } catch (err) {
        if (leave.signal.aborted) return reply; // nobody is listening
        throw new ServiceError('bad_gateway', undefined, { cause: err });
      }
      // The server refused the identity asserted here: the gateway's key or clock is wrong, not
      // the caller's credential, and a 401 passed on would send a person to log in again for ever.
      const refused = res.headers[IDENTITY_REFUSED_HEADER];
      if (how.identity && res.statusCode === 401 && typeof refused === 'string') {
        await res.body.dump();
        throw new ServiceError('bad_gateway', `the server refused the identity this gateway asserted (${refused}): the gateway and the server need the same SVC_GATEWAY_SECRET, and clocks within ${ASSERTION_TTL_S} s of each other`);
      }
      reply.code(res.statusCode);
      const serverHopByHop = connectionNamed(res.headers.connection);
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined && !DROP_RESPONSE.has(name) && !serverHopByHop.has(name)) reply.header(name, value);
      }
      // A small answer of known length is read whole and sent in one write (cheaper than a pipe);
      // anything else, event streams above all, is piped as it arrives.
      const length = Number(res.headers['content-length']);
      if (Number.isInteger(length) && length <= BUFFERED_ANSWER_MAX_BYTES && !String(res.headers['content-type']).startsWith('text/event-stream')) {
        return reply.send(Buffer.from(await res.body.arrayBuffer()));
      }
      if (watch && String(res.headers['content-type']).startsWith('text/event-stream')) return reply.send(watchedStream(res.body, reply, leave, watch));
      // Swallows the abort error of a stream whose client left; fastify has already answered.
      res.body.on('error', () => {});
      return reply.send(res.body);
    },
    relay(client, req, how, watch) {
      const url = new URL(req.url, upstream.origin);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      // Only the client's credential and what the gateway sets: `ws` makes the handshake's own headers.
      // Signed for the target `ws` sends: the URL's, which may spell the path otherwise than req.url.
      const headers = withHeaders({}, { authorization: req.headers.authorization, ...gatewayHeaders(req, how, 'GET', `${url.pathname}${url.search}`) });
      const server = new WebSocket(url, { headers, handshakeTimeout: UPSTREAM_HEADERS_TIMEOUT_MS });
      const pending: { data: WebSocket.RawData; binary: boolean }[] = [];
      const close = (socket: WebSocket, code: number, reason: string) => {
        if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.close(code, reason.slice(0, WS_REASON_MAX_CHARS));
      };
      server.on('open', () => {
        for (const m of pending.splice(0)) server.send(m.data, { binary: m.binary });
      });
      server.on('message', (data, binary) => client.send(data, { binary }));
      server.on('unexpected-response', (_r, res) => {
        res.resume();
        close(client, WS_POLICY_VIOLATION, `the server refused the stream: HTTP ${res.statusCode}`);
        server.terminate();
      });
      server.on('close', (code, reason) => close(client, sendableCode(code), reason.toString()));
      server.on('error', () => close(client, WS_UNREACHABLE, 'the server is unreachable'));
      client.on('message', (data, binary) => (server.readyState === WebSocket.OPEN ? server.send(data, { binary }) : pending.push({ data, binary })));
      client.on('close', () => (server.readyState === WebSocket.CONNECTING ? server.terminate() : close(server, 1000, '')));
      client.on('error', () => server.terminate());
      if (!watch) return;
      const done = new AbortController();
      client.once('close', () => done.abort());
      const stop = (code: number, reason: string) => {
        close(client, code, reason);
        if (server.readyState === WebSocket.CONNECTING) server.terminate();
        else close(server, 1000, '');
      };
      watch(done.signal).then(
        (lapse) => lapse !== undefined && stop(WS_POLICY_VIOLATION, lapse),
        () => stop(WS_UNREACHABLE, 'the caller could not be checked'),
      );
    },
    async read(path, how) {
      const headers = withHeaders({ accept: 'application/json' }, { authorization: how.authorization ?? undefined, [IDENTITY_HEADER]: how.identity?.(requestOf('GET', path), bodyDigest(undefined)) });
      let res;
      try {
        res = await pool.request({ origin: upstream.origin, path, method: 'GET', headers });
      } catch (err) {
        throw new ServiceError('bad_gateway', undefined, { cause: err });
      }
      const text = await res.body.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the status alone says what happened
      }
      return { status: res.statusCode, body };
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
