// A real HTTP server on 127.0.0.1, port 0, for tests that need something to call. It records every
// request and serves a few generic routes; a custom handler runs first and wins when it answers.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';

export type RecordedRequest = {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string | string[] | undefined>;
  body: string;
};

/** Answers the request (or leaves it to the built-in routes by not writing anything). */
export type TargetHandler = (req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest) => void | Promise<void>;

export type HttpTargetOptions = {
  /** Client id and secret the `/token` route accepts (form fields or HTTP Basic). */
  oauth2?: { clientId: string; clientSecret: string };
};

export type HttpTarget = {
  url: string;
  requests: RecordedRequest[];
  /** Access tokens issued by `/token`, in order; `/protected` accepts only these. */
  issuedTokens: string[];
  close(): Promise<void>;
};

export const DEFAULT_CLIENT_ID = 'test-client';
export const DEFAULT_CLIENT_SECRET = 'test-client-secret';

/**
 * Starts the target. Routes:
 * - `/echo` → 200 JSON `{method, path, query, headers, body}` (body JSON-parsed when it is JSON)
 * - `/status/<code>` → that status with JSON `{status}`
 * - `/flaky?fail=N&key=K` → 503 for the first N calls per key (default the whole URL), then 200 `{calls}`
 * - `/delay/<ms>` → 200 JSON `{delayed_ms}` after ms (stops early when the client goes away)
 * - `/text` → 200 text/plain `hello`
 * - `/token` → oauth2 client-credentials endpoint; query `expires_in` (default 3600), `status` (force an error)
 * - `/protected` → 200 `{ok: true}` for `Authorization: Bearer <issued token>`, else 401
 */
export async function startHttpTarget(handler?: TargetHandler, options: HttpTargetOptions = {}): Promise<HttpTarget> {
  const requests: RecordedRequest[] = [];
  const issuedTokens: string[] = [];
  const flakyCalls = new Map<string, number>();
  const clientId = options.oauth2?.clientId ?? DEFAULT_CLIENT_ID;
  const clientSecret = options.oauth2?.clientSecret ?? DEFAULT_CLIENT_SECRET;

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    const url = new URL(req.url ?? '/', 'http://target');
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: queryObject(url.searchParams),
      headers: { ...req.headers },
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(recorded);
    try {
      if (handler) await handler(req, res, recorded);
      if (res.headersSent || res.writableEnded) return;
      await route(url, req, res, recorded);
    } catch (error) {
      if (!res.headersSent) json(res, 500, { error: error instanceof Error ? error.message : String(error) });
      else res.destroy();
    }
  });

  async function route(url: URL, req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest): Promise<void> {
    const [, first, second] = url.pathname.split('/');
    switch (first) {
      case 'echo':
        return json(res, 200, { method: recorded.method, path: recorded.path, query: recorded.query, headers: recorded.headers, body: parseMaybeJson(recorded) });
      case 'status': {
        const status = Number(second);
        return json(res, status >= 200 && status <= 599 ? status : 400, { status });
      }
      case 'flaky': {
        const key = url.searchParams.get('key') ?? url.pathname + url.search;
        const calls = (flakyCalls.get(key) ?? 0) + 1;
        flakyCalls.set(key, calls);
        return calls <= Number(url.searchParams.get('fail') ?? '1') ? json(res, 503, { calls }) : json(res, 200, { calls });
      }
      case 'delay': {
        const ms = Number(second) || 0;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          res.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (!res.destroyed) json(res, 200, { delayed_ms: ms });
        return;
      }
      case 'text':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello');
        return;
      case 'token':
        return token(url, req, res, recorded);
      case 'protected': {
        const auth = req.headers.authorization ?? '';
        const ok = auth.startsWith('Bearer ') && issuedTokens.includes(auth.slice('Bearer '.length));
        return ok ? json(res, 200, { ok: true }) : json(res, 401, { error: 'unauthorized' });
      }
      default:
        return json(res, 404, { error: 'not found', path: url.pathname });
    }
  }

  function token(url: URL, req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest): void {
    const forced = url.searchParams.get('status');
    if (forced) return json(res, Number(forced), { error: 'forced_failure' });
    const form = new URLSearchParams(recorded.body);
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = req.headers.authorization?.match(/^Basic (.+)$/);
    if (basic) [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
    if (req.method !== 'POST' || form.get('grant_type') !== 'client_credentials') return json(res, 400, { error: 'unsupported_grant_type' });
    if (id !== clientId || secret !== clientSecret) return json(res, 401, { error: 'invalid_client' });
    const accessToken = `token-${issuedTokens.length + 1}-${Math.random().toString(36).slice(2)}`;
    issuedTokens.push(accessToken);
    const expiresIn = Number(url.searchParams.get('expires_in') ?? '3600');
    const scope = form.get('scope');
    return json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: expiresIn, ...(scope ? { scope } : {}) });
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('http target is not listening on TCP');
  const { port } = address;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    issuedTokens,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    query[key] = values.length === 1 ? values[0] : values;
  }
  return query;
}

function parseMaybeJson(recorded: RecordedRequest): unknown {
  const type = recorded.headers['content-type'];
  if (typeof type !== 'string' || !type.includes('json')) return recorded.body;
  try {
    return JSON.parse(recorded.body);
  } catch {
    return recorded.body;
  }
}
