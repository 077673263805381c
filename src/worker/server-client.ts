import http from 'node:http';
import https from 'node:https';
import { printableText } from '../cli/text-width.ts';
import type { ReportAnswer, ReportRequest } from '../protocol.ts';

// An idle kept-alive socket is closed after this long (sooner when the server's `Keep-Alive:
// timeout=N` asks for it: node's agent honours the hint only when it has a timeout of its own).
const IDLE_SOCKET_TIMEOUT_MS = 30_000;

/** An HTTP error answer from the server, with its status and `detail`. Never carries request bodies. */
export class ServerError extends Error {
  override name = 'ServerError';
  readonly status: number;
  readonly detail: unknown;
  constructor(status: number, detail: unknown, what: string) {
    // The server's words may quote data (a step's name, a signal's): written where a person reads
    // them (svc's stderr, a worker's log), their control characters are escapes, never acted on.
    const said = typeof detail === 'string' ? detail : detail && typeof detail === 'object' && 'message' in detail ? String(detail.message) : '';
    super(`${what}: HTTP ${status}${said ? ` ${printableText(said)}` : ''}`);
    this.status = status;
    this.detail = detail;
  }
}

/**
 * The server's reason when it has the credential but cannot open it (409: sealed with a key it
 * lacks, or changed since; src/crypto/open-credential.ts), which names the credential and never
 * its data; undefined for any other failure.
 */
export function unopenableCredential(err: unknown): string | undefined {
  return err instanceof ServerError && err.status === 409 && typeof err.detail === 'string' ? err.detail : undefined;
}

/** A 4xx answer: the server will never take this request as it is (408 and 429 only say "not now"). */
export function isRefusal(err: unknown): err is ServerError {
  return err instanceof ServerError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429;
}

/**
 * A 500: the server failed on this request itself (a fault of its code with these data), not for
 * want of its database (503) or of a server (502-504). Sent again it may fail the same way.
 */
export function isServerFault(err: unknown): err is ServerError {
  return err instanceof ServerError && err.status === 500;
}

/** No server to answer yet: refused or unreachable (TypeError), no answer in time (TimeoutError), or a 502-504 from what stands before it. */
export function serverNotUp(err: unknown): boolean {
  const timedOut = err instanceof DOMException && err.name === 'TimeoutError';
  return err instanceof TypeError || timedOut || (err instanceof ServerError && err.status >= 502 && err.status <= 504);
}

/** The detail of an error answer's body: its `detail` when it is a problem document, else the JSON or the text itself. */
export function problemDetail(text: string): unknown {
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the text is the detail
  }
  return parsed && typeof parsed === 'object' && 'detail' in parsed ? parsed.detail : parsed;
}

export type ServerClientOptions = {
  /** Abort each request that has no answer after this long (none by default: claims long-poll). */
  timeoutMs?: number;
  /** Sent as `Authorization: Bearer <token>` on every request: the worker token, or an API token. */
  token?: string;
  /**
   * The server of `baseUrl` when it runs in this process (`svc start`'s workers): requests that
   * cannot be abandoned go to it without a socket (fastify's `inject`: the same routes, hooks,
   * auth, validation and answers). Requests with a signal (a long-polling claim) keep the socket,
   * whose closing is how the server learns that a claimer went away.
   */
  inProcess?: InProcessServer;
};

/**
 * What the client needs of an in-process server: fastify's `inject` (light-my-request), and the
 * report's handler (src/in-process-server.ts), which answers or refuses as the route does, without
 * the HTTP around it.
 */
export type InProcessServer = {
  inject(request: { method: string; url: string; headers: Record<string, string>; payload?: Buffer }): PromiseLike<{ statusCode: number; payload: string }>;
  report?(body: ReportRequest): Promise<ReportAnswer>;
};

type Target = { request: typeof http.request; agent: http.Agent; hostname: string; port: string; basePath: string };
type Answer = { status: number; text: string };

/** One message of a server-sent-event stream (`event` is "message" when the server named none). */
export type ServerSentEvent = { event: string; data: string; id: string | undefined };

// A request that failed before any answer; `stale` when it went out on a reused keep-alive socket
// that the server had closed meanwhile, so the server never saw it and sending again is safe.
class NoAnswer {
  readonly cause: unknown;
  readonly stale: boolean;
  constructor(cause: unknown, stale: boolean) {
    this.cause = cause;
    this.stale = stale;
  }
}

/**
 * Workers reach the server over HTTP only; this is that one door (a pool in the server's own
 * process hands its reports to the server's handler instead: `report`). node:http with a
 * keep-alive agent: a small JSON POST costs a third to a quarter of the CPU of `fetch`
 * (docs/benchmarks.md).
 */
export class ServerClient {
  readonly baseUrl: string;
  readonly #target: Target | string;
  readonly #timeoutMs: number | undefined;
  readonly #authorization: string | undefined;
  readonly #inProcess: InProcessServer | undefined;

  constructor(baseUrl: string, opts: ServerClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.#timeoutMs = opts.timeoutMs;
    this.#authorization = opts.token === undefined ? undefined : `Bearer ${opts.token}`;
    this.#target = parseTarget(this.baseUrl);
    this.#inProcess = opts.inProcess;
  }

  /**
   * POST /api/worker/report: to the in-process server's report handler when it has one, else a
   * request like any other (sent again as `resendBody` when a reused socket turned out closed).
   */
  report(body: ReportRequest, resendBody: ReportRequest): Promise<ReportAnswer> {
    if (this.#inProcess?.report) return this.#inProcess.report(body);
    return this.request<ReportAnswer>('POST', '/api/worker/report', body, undefined, { resendBody });
  }

  /**
   * JSON request; resolves with the parsed answer (its text when it is not JSON, null when empty).
   * Throws ServerError for non-2xx answers, TypeError for network failures (the socket error as
   * `cause`), and the signal's reason when `signal` (or the client's timeout) aborts it.
   * `resendBody`: what to send if the request goes again on a fresh socket (see below).
   * `headers`: sent with the request (and with the copy sent again).
   */
  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal, opts: { resendBody?: unknown; headers?: Record<string, string> } = {}): Promise<T> {
    const what = `${method} ${path.split('?')[0]}`;
    if (typeof this.#target === 'string') throw new TypeError(`${what}: ${this.#target}`);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const timeout = this.#timeoutMs ? AbortSignal.timeout(this.#timeoutMs) : undefined;
    const abort = signal && timeout ? AbortSignal.any([signal, timeout]) : (signal ?? timeout);
    let answer: Answer;
    try {
      answer =
        this.#inProcess && !abort
          ? await injected(this.#inProcess, this.#target.basePath + path, method, payload, this.#authorization, opts.headers)
          : await exchange(this.#target, method, path, payload, this.#authorization, opts.headers, abort);
    } catch (err) {
      if (!(err instanceof NoAnswer)) throw err;
      if (!err.stale) throw networkError(what, err.cause);
      // Most likely the server had closed that idle socket and never saw the request; but it may
      // have carried it out and lost the answer, so the caller can mark the copy as sent again.
      const again = opts.resendBody === undefined ? payload : Buffer.from(JSON.stringify(opts.resendBody));
      try {
        answer = await exchange(this.#target, method, path, again, this.#authorization, opts.headers, abort);
      } catch (again) {
        throw again instanceof NoAnswer ? networkError(what, again.cause) : again;
      }
    }
    let parsed: unknown = null;
    if (answer.text) {
      try {
        parsed = JSON.parse(answer.text);
      } catch {
        parsed = answer.text;
      }
    }
    if (answer.status < 200 || answer.status > 299) {
      const detail = parsed && typeof parsed === 'object' && 'detail' in parsed ? parsed.detail : parsed;
      throw new ServerError(answer.status, detail, what);
    }
    // The caller names the answer's shape; validating it is the caller's business.
    return parsed as T;
  }

  /**
   * GET of a server-sent-event stream: yields its messages until the server ends it (or `signal`
   * aborts). Throws ServerError when the answer is not 200, TypeError when there is none or the
   * connection ends before the stream does (the server died: Node's `aborted`, as a request's
   * network failure).
   */
  async *events(path: string, signal?: AbortSignal): AsyncGenerator<ServerSentEvent> {
    const what = `GET ${path.split('?')[0]}`;
    if (typeof this.#target === 'string') throw new TypeError(`${what}: ${this.#target}`);
    const res = await openStream(this.#target, path, this.#authorization, signal).catch((err: unknown) => {
      throw err instanceof NoAnswer ? networkError(what, err.cause) : err;
    });
    if (res.statusCode !== 200) {
      throw new ServerError(res.statusCode ?? 0, problemDetail(await readAll(res)), what);
    }
    res.setEncoding('utf8');
    let buffer = '';
    try {
      for await (const chunk of res) {
        buffer += String(chunk).replace(/\r\n?/g, '\n');
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const message = parseServerSentEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (message) yield message;
        }
      }
    } catch (err) {
      throw signal?.aborted ? err : networkError(what, err);
    } finally {
      res.destroy();
    }
  }

  /** Closes the kept-alive sockets (a later request opens new ones). */
  close(): void {
    if (typeof this.#target !== 'string') this.#target.agent.destroy();
  }
}

// The base URL once, so each request only joins a path. A bad URL is reported by each request
// (as fetch did), without repeating the URL, which may carry a password.
function parseTarget(baseUrl: string): Target | string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return 'the server URL is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `the server URL must be http or https, not ${url.protocol}`;
  if (url.username || url.password) return 'the server URL must not contain credentials';
  const secure = url.protocol === 'https:';
  const agentOptions = { keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS };
  return {
    request: secure ? https.request : http.request,
    agent: secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions),
    // URL keeps IPv6 literals in brackets; the socket layer wants them bare.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port,
    basePath: url.pathname.replace(/\/+$/, ''),
  };
}

/** The headers of a JSON request, over a socket or in process. */
function requestHeaders(payload: Buffer | undefined, authorization: string | undefined, extraHeaders: Record<string, string> | undefined): Record<string, string> {
  const headers: Record<string, string> = { ...extraHeaders, accept: 'application/json' };
  if (authorization) headers.authorization = authorization;
  if (payload) headers['content-type'] = 'application/json';
  return headers;
}

function exchange(
  target: Target,
  method: string,
  path: string,
  payload: Buffer | undefined,
  authorization: string | undefined,
  extraHeaders: Record<string, string> | undefined,
  signal: AbortSignal | undefined,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const headers: http.OutgoingHttpHeaders = requestHeaders(payload, authorization, extraHeaders);
    if (payload) headers['content-length'] = payload.length;
    const req = target.request({ agent: target.agent, hostname: target.hostname, port: target.port, path: target.basePath + path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => settle(() => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') })));
      res.on('error', (err) => settle(() => reject(new NoAnswer(err, false))));
      // A connection dropped mid-answer may end the stream without an error.
      res.on('close', () => settle(() => reject(new NoAnswer(new Error('connection closed before the answer was complete'), false))));
    });
    function onAbort() {
      settle(() => reject(signal?.reason));
      req.destroy();
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => {
      const stale = req.reusedSocket && 'code' in err && err.code === 'ECONNRESET';
      settle(() => reject(new NoAnswer(err, stale)));
    });
    req.end(payload);
  });
}

/** The exchange with an in-process server: the request `exchange` would send, without a socket. */
async function injected(
  server: InProcessServer,
  url: string,
  method: string,
  payload: Buffer | undefined,
  authorization: string | undefined,
  extraHeaders: Record<string, string> | undefined,
): Promise<Answer> {
  try {
    const res = await server.inject({ method, url, headers: requestHeaders(payload, authorization, extraHeaders), ...(payload ? { payload } : {}) });
    return { status: res.statusCode, text: res.payload };
  } catch (err) {
    // The server is closing or closed: as a socket refused, never sent again (it may have run).
    throw new NoAnswer(err, false);
  }
}

/** Opens a GET whose answer is read as a stream (its own socket: a stream holds it until it ends). */
function openStream(target: Target, path: string, authorization: string | undefined, signal: AbortSignal | undefined): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const headers: http.OutgoingHttpHeaders = { accept: 'text/event-stream' };
    if (authorization) headers.authorization = authorization;
    const req = target.request({ hostname: target.hostname, port: target.port, path: target.basePath + path, method: 'GET', headers, signal }, resolve);
    req.on('error', (err) => reject(signal?.aborted ? signal.reason : new NoAnswer(err, false)));
    req.end();
  });
}

async function readAll(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** One message block of an event stream (lines `event:`, `data:`, `id:`; comments skipped); undefined when it has no data. */
export function parseServerSentEvent(block: string): ServerSentEvent | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  return data.length ? { event, data: data.join('\n'), id } : undefined;
}

// One line saying why, without the URL or anything sent; the socket error stays as `cause`.
function networkError(what: string, cause: unknown): TypeError {
  const inner = cause instanceof AggregateError && cause.errors[0] instanceof Error ? cause.errors[0] : cause;
  const reason = inner instanceof Error ? inner.message || ('code' in inner ? String(inner.code) : inner.name) : String(inner);
  return new TypeError(`${what}: ${reason}`, { cause });
}
