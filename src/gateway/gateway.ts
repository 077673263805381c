// `svc gateway`: the authenticating proxy in front of the server (docs/gateway.md). One request
// hook decides for every route by its `gate`: CORS first (preflights answered here), then who
// calls (session cookie, bearer JWT, the server's API token), rate limits, the CSRF rule, and a
// role. The server behind it gets the caller as the signed identity assertion of SVC_AUTH=gateway
// and checks each route's role itself (one table of routes' access, the server's).
import fastifyCookie from '@fastify/cookie';
import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ASSERTION_TTL_S, signIdentity } from '../auth/identity-assertion.ts';
import { answerClientError, answerFrameworkError, installErrorHandler } from '../api/error-handler.ts';
import { installSecurityHeaders } from '../security-headers.ts';
import { MAX_PARAM_CHARS } from '../body-limit.ts';
import { ConfigError } from '../config.ts';
import type { Db } from '../db/db.ts';
import { gatewaySessionTablesExist } from '../db/gateway-session.repo.ts';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { createMetrics } from '../metrics.ts';
import { every, type Periodic } from '../periodic/every.ts';
import { GATEWAY_SESSION_SWEEP, sweepGatewaySessions } from '../periodic/gateway-session-sweep.ts';
import { audit, auditLogger, wasAudited } from './audit.ts';
import { VerifiedJwtCache } from './bearer-jwt.ts';
import { registerAuthRoutes } from './auth-routes.ts';
import { callerLabel, resolveCaller, type Caller } from './caller.ts';
import { callerWatch } from './caller-watch.ts';
import { CALLBACK_PATH, sessionIdOf } from './cookies.ts';
import { applyCors, csrfRefusal, isPreflight } from './cors.ts';
import { registerGuiRoutes } from './gui-routes.ts';
import { IdentityProvider } from './identity-provider.ts';
import { createProxy, type Forward, type Proxy } from './proxy.ts';
import { RateLimiter, TakenTokens } from '../rate-limit.ts';
import { SessionStore } from './session-store.ts';
import { bodyPath, pathAllowed, triggerStartPath } from './playbook-paths.ts';
import { asObject, isObject } from '../objects.ts';
import { publicOriginFor, type GatewaySettings } from './settings.ts';
import { MAX_WEBHOOK_BODY_BYTES } from '../triggers/trigger.schema.ts';
import { requestTimeoutOptions } from '../request-timeout.ts';

/**
 * How a route is let in: `public` (anyone), `login` (the auth routes: limited per address),
 * `me` (the caller is resolved, none is refused by the route itself), `caller` (a caller with a
 * role is required, limited per identity).
 */
export type Gate = 'public' | 'login' | 'me' | 'caller';

declare module 'fastify' {
  interface FastifyContextConfig {
    gate?: Gate;
    /** A GET that changes state all the same (GET /auth/logout ends the session): held to the CSRF rule as a POST is. */
    changesState?: boolean;
  }
  interface FastifyRequest {
    /** Who calls, set by the gateway's hook on `me` and `caller` routes. */
    caller: Caller | null;
  }
}

/** A webhook delivery answered so was refused: unauthenticated, or no such trigger. */
const REFUSED_DELIVERY: ReadonlySet<number> = new Set([401, 403, 404]);

export type GatewayDeps = {
  settings: GatewaySettings;
  log: Logger;
  bodyLimitBytes: number;
  guiDir?: string;
  /**
   * The service database, where sessions are kept (shared by every gateway on it); required with
   * an OpenID provider, unused without one (no one logs in). Its owner closes it, after close().
   */
  db: Db | null;
};

export type Gateway = {
  app: FastifyInstance;
  provider: IdentityProvider | null;
  /** Null without a provider: no one logs in, so there are no sessions. */
  sessions: SessionStore | null;
  /** True when gui/dist was found and is served at /. */
  servesGui: boolean;
  close(): Promise<void>;
};

function tooMany(reply: FastifyReply, seconds: number): ServiceError {
  reply.header('retry-after', String(seconds));
  return new ServiceError('too_many_requests', `rate limit reached; try again in ${seconds} s`);
}

/** Builds the gateway (does not listen); starts the provider's discovery and the sweep of expired sessions. */
export async function buildGateway(deps: GatewayDeps): Promise<Gateway> {
  const { settings, log } = deps;
  // Sessions exist only where people log in, that is with a provider.
  const db = settings.oidc ? deps.db : null;
  if (settings.oidc && !db) throw new ConfigError('sessions are kept in the service database: with SVC_OIDC_ISSUER the gateway needs SVC_DATABASE_URL (docs/gateway.md, "Sessions")');
  if (db && !(await gatewaySessionTablesExist(db))) {
    throw new ConfigError('the database has no gateway session tables (migrations/0022): start a server of this version on it first, or run `svc migrate`');
  }
  const logger: FastifyBaseLogger = log;
  const app = Fastify({
    loggerInstance: logger,
    // Request lines would carry query strings (the login callback's code); audit lines say what matters.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.bodyLimitBytes,
    // It reads a body before passing it on: a request must arrive within SVC_REQUEST_TIMEOUT_SECONDS, as at the server.
    ...requestTimeoutOptions(settings.requestTimeoutSeconds),
    // The server's: a path parameter it routes must reach the same checked route here, not /api/*.
    routerOptions: { maxParamLength: MAX_PARAM_CHARS },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    forceCloseConnections: true,
    // Only named proxies may say who the client is (X-Forwarded-For); anyone else's header is ignored.
    trustProxy: settings.trustedProxies.length > 0 ? settings.trustedProxies : false,
  });
  const provider = settings.oidc ? new IdentityProvider(settings.oidc, log) : null;
  const sessions = db ? new SessionStore(db, settings.sessionIdleMs, settings.sessionMaxMs) : null;
  const proxy: Proxy = createProxy(settings.upstream);
  const jwts = new VerifiedJwtCache();
  const auditLog = auditLogger(log);
  const apiLimit = new RateLimiter(settings.apiRatePerMinute);
  const authLimit = new RateLimiter(settings.authRatePerMinute);
  const takenTokens = new TakenTokens();
  const originOf = (req: FastifyRequest): string => {
    const origin = publicOriginFor(settings.publicOrigins, req.headers.host, `${req.protocol}://${req.headers.host ?? `${settings.host}:${settings.port}`}`);
    // Without GATEWAY_PUBLIC_URL the origin is the request's Host, which may be no host at all
    // (empty, a port out of range): its cookies and callback address cannot be made.
    if (!URL.canParse(origin)) throw new ServiceError('bad_request', `the Host header (${JSON.stringify(req.headers.host ?? '')}) names no host and port; send this gateway's own name (or set GATEWAY_PUBLIC_URL)`);
    return origin;
  };

  installErrorHandler(app);
  installSecurityHeaders(app);
  await app.register(fastifyCookie);
  // WebSocket handshakes go through the same hook as any request (who calls, limits, the CSRF
  // rule), then are relayed to the server (proxy.ts).
  await app.register(websocket);
  // Bodies are read as bytes (size-limited like the server's) and passed on unparsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.decorateRequest('caller', null);

  app.addHook('onRequest', async (req, reply) => {
    const corsAllowed = applyCors(req, reply, settings.corsOrigins);
    if (isPreflight(req)) {
      if (!corsAllowed) throw new ServiceError('forbidden', `origin ${String(req.headers.origin)} is not allowed (CORS_ALLOWED_ORIGINS)`);
      return reply.code(204).send();
    }
    if (req.is404) return;
    const gate = req.routeOptions.config.gate;
    if (!gate) throw new ServiceError('forbidden', 'this route declares no gate, so no caller is let in');
    if (gate === 'public') return;
    const origin = originOf(req);
    const changesState = req.routeOptions.config.changesState === true;
    if (gate === 'login') {
      const limited = authLimit.hit(`ip:${req.ip}`);
      if (!limited.ok) throw tooMany(reply, limited.retryAfterSeconds);
      const refused = sessionIdOf(req, origin) ? csrfRefusal(req, origin, settings.corsOrigins, changesState) : undefined;
      if (refused) throw new ServiceError('forbidden', refused);
      return;
    }
    const caller = await resolveCaller(req, sessionIdOf(req, origin), provider, sessions, jwts);
    req.caller = caller;
    if (caller.kind === 'anonymous' || caller.kind === 'refused') {
      const limited = apiLimit.hit(`ip:${req.ip}`);
      if (!limited.ok) throw tooMany(reply, limited.retryAfterSeconds);
      // A credential sent and refused is named wherever it was sent (/auth/me too); no credential
      // at /auth/me is the route's to answer.
      if (gate === 'me' && caller.kind === 'anonymous') return;
      reply.header('www-authenticate', caller.kind === 'refused' ? 'Bearer error="invalid_token"' : 'Bearer');
      throw new ServiceError('unauthorized', caller.kind === 'refused' ? caller.reason : 'authentication required: log in (/auth/login) or send Authorization: Bearer <JWT or API token>');
    }
    // An API token the server has not taken lately may be made up: its request counts against the
    // address as a refused one does, beside its own window.
    if (caller.kind === 'api-token' && !takenTokens.has(caller.key)) {
      const byAddress = apiLimit.hit(`ip:${req.ip}`);
      if (!byAddress.ok) throw tooMany(reply, byAddress.retryAfterSeconds);
    }
    const limited = apiLimit.hit(callerLabel(caller));
    if (!limited.ok) throw tooMany(reply, limited.retryAfterSeconds);
    if (caller.kind === 'session') {
      const refused = csrfRefusal(req, origin, settings.corsOrigins, changesState);
      if (refused) throw new ServiceError('forbidden', refused);
    }
    if (gate === 'caller' && (caller.kind === 'jwt' || caller.kind === 'session') && caller.role === null) {
      throw new ServiceError('forbidden', `${callerLabel(caller)} has no role here: the provider's roles claim maps to none of viewer, operator, admin`);
    }
  });
  app.addHook('onResponse', async (req, reply) => {
    const { gate, changesState } = req.routeOptions.config;
    if (gate === 'caller' || gate === 'me') audit(auditLog, req, reply, req.caller ? callerLabel(req.caller) : 'anonymous');
    // A login or logout the auth routes did not get to write (refused by the CSRF rule or a
    // limit, a callback with no login in progress) is written here, by no one it could name.
    else if (gate === 'login' && !wasAudited(req)) audit(auditLog, req, reply, 'anonymous', changesState === true || req.routeOptions.url === CALLBACK_PATH);
    // The public routes that change state are webhook deliveries (the trigger's signature, not a
    // caller, authenticates them): accepted or refused, a line names no one.
    else if (gate === 'public') audit(auditLog, req, reply, 'anonymous');
  });

  app.get('/health', { config: { gate: 'public' } }, async (_req, reply) => reply.type('text/plain; charset=utf-8').send('ok'));
  app.get('/ready', { config: { gate: 'public' } }, async (_req, reply) => {
    const [upstream, store] = await Promise.all([proxy.reachable(), db ? db.ping() : null]);
    const idp = provider === null ? 'not configured' : provider.loaded ? 'loaded' : 'not loaded';
    // A read-only store (a standby after a failover) cannot take a login's session: not ready either.
    const sessionStore = store === null ? 'not used' : store === 'ok' ? 'reachable' : store === 'read_only' ? 'read only' : 'unreachable';
    const ready = upstream && idp !== 'not loaded' && (sessionStore === 'reachable' || sessionStore === 'not used');
    return reply.code(ready ? 200 : 503).send({ ready, upstream: upstream ? 'reachable' : 'unreachable', identity_provider: idp, sessions: sessionStore });
  });

  // The server's API: the caller's identity goes upstream as the signed assertion; an API token
  // goes as it came (the server checks it and its role); the client's own identity header is
  // always dropped (proxy.ts).
  const upstreamAs = (req: FastifyRequest): Forward => {
    const c = req.caller;
    if (c?.kind === 'api-token') return {};
    if (c?.kind === 'jwt' || c?.kind === 'session') {
      if (c.role === null) throw new ServiceError('forbidden', 'no role');
      const { sub, role } = c;
      const identity = (request: string, body: string) => signIdentity({ sub, role, exp: Math.floor(Date.now() / 1000) + ASSERTION_TTL_S, req: request, body }, settings.assertionSecret);
      return { authorization: null, identity };
    }
    throw new ServiceError('unauthorized', 'authentication required');
  };
  const forwardApi = async (req: FastifyRequest, reply: FastifyReply) => {
    // A session or bearer JWT is checked again while an event stream lasts (caller-watch.ts).
    const sent = await proxy.forward(req, reply, upstreamAs(req), callerWatch(req.caller, sessions));
    if (req.caller?.kind === 'api-token') takenTokens.record(req.caller.key, reply.statusCode !== 401);
    return sent;
  };
  app.all('/api/*', { config: { gate: 'caller' } }, forwardApi);
  // The server's metrics are a viewer's (docs/operations.md): a scraper that can reach only the
  // gateway (the server on a private address, as the hardening list asks) sends a token here and
  // gets the server's exposition. Unrouted, /metrics fell to the console and answered its page, 200.
  app.get('/metrics', { config: { gate: 'caller' } }, forwardApi);

  // A caller restricted to playbook path patterns (SVC_OIDC_PATHS_CLAIM) starts executions only
  // of those; the server checks the role. The routes that start one are matched by the router,
  // as the server's router matches them, so no other spelling of their URL (%70 for p) passes
  // unchecked; a start whose playbook cannot be read is refused rather than let through.
  const restriction = (req: FastifyRequest): { who: string; paths: string[] } | undefined => {
    const c = req.caller;
    return (c?.kind === 'jwt' || c?.kind === 'session') && c.paths ? { who: callerLabel(c), paths: c.paths } : undefined;
  };
  const requireMayStart = (limited: { who: string; paths: string[] }, path: string | undefined, what = 'start only playbooks', unnamed = 'a playbook this request does not name'): void => {
    if (path !== undefined && pathAllowed(path, limited.paths)) return;
    const allowed = limited.paths.length ? limited.paths.join(', ') : '(no pattern)';
    throw new ServiceError('forbidden', `${limited.who} may ${what} matching ${allowed}; not ${path ?? unnamed}`);
  };
  const forwardBodyStart = async (req: FastifyRequest, reply: FastifyReply) => {
    const limited = restriction(req);
    if (limited) requireMayStart(limited, bodyPath(req.body));
    return forwardApi(req, reply);
  };
  const starts = { config: { gate: 'caller' as const } };
  app.post('/api/run/playbook', starts, forwardBodyStart);
  app.post('/api/execute', starts, forwardBodyStart);
  // A fire or backfill starts the trigger's playbook (pause and resume start nothing: undefined passes).
  app.post('/api/triggers/*', starts, async (req, reply) => {
    const limited = restriction(req);
    const path = triggerStartPath((req.params as { '*': string })['*']);
    if (limited && path !== undefined) requireMayStart(limited, path);
    return forwardApi(req, reply);
  });
  // A retry starts the old execution's playbook again: the server says which (read as the caller);
  // an execution it refuses to show (unknown, a malformed id) is left to its answer to the retry.
  app.post('/api/executions/:id/retry', starts, async (req, reply) => {
    const limited = restriction(req);
    if (limited) {
      const id = encodeURIComponent((req.params as { id: string }).id);
      const found = await proxy.read(`/api/executions/${id}`, upstreamAs(req));
      if (found.status === 200) requireMayStart(limited, isObject(found.body) && typeof found.body.path === 'string' ? found.body.path : undefined);
      else if (found.status < 400 || found.status >= 500) throw new ServiceError('bad_gateway', `the server answered ${found.status} when asked which playbook execution ${id} ran`);
    }
    return forwardApi(req, reply);
  });
  // An MCP server's lifecycle action starts the playbook its document maps the action to: a
  // restricted caller needs both the document's catalog path (which server it acts on) and that
  // playbook's (what runs, with the caller's payload), as the server says them (read as the
  // caller). A server or action the server does not know is left to its answer (404).
  app.post('/api/mcp/mcp/:server_name/lifecycle/:action', starts, async (req, reply) => {
    const limited = restriction(req);
    if (limited) {
      const { server_name: name, action } = req.params as { server_name: string; action: string };
      const found = await proxy.read(`/api/mcp/servers/${encodeURIComponent(name)}`, upstreamAs(req));
      if (found.status === 200) {
        const server = asObject(found.body);
        const docPath = typeof server.path === 'string' ? server.path : undefined;
        requireMayStart(limited, docPath, 'act only on MCP servers with a document path', `MCP server '${name}', which has no catalog path`);
        const playbooks = asObject(server.lifecycle_playbooks);
        if (Object.hasOwn(playbooks, action)) {
          const playbook = playbooks[action];
          requireMayStart(limited, typeof playbook === 'string' ? playbook : undefined);
        }
      } else if (found.status < 400 || found.status >= 500) throw new ServiceError('bad_gateway', `the server answered ${found.status} when asked for MCP server ${name}`);
    }
    return forwardApi(req, reply);
  });
  // The server's WebSocket routes: a handshake is relayed as the same caller, who is checked again
  // while it lasts (as for event streams); a plain GET is proxied.
  app.route({
    method: 'GET',
    url: '/api/executions/:id/inspect',
    config: { gate: 'caller' },
    handler: forwardApi,
    wsHandler: (socket, req) => proxy.relay(socket, req, upstreamAs(req), callerWatch(req.caller, sessions)),
  });
  // The server's public health route and API documents pass without an identity.
  const forwardPublic = async (req: FastifyRequest, reply: FastifyReply) => proxy.forward(req, reply, { authorization: null });
  app.get('/api/health', { config: { gate: 'public' } }, forwardPublic);
  for (const path of ['/docs', '/docs/*', '/redoc', '/redoc/*']) app.get(path, { config: { gate: 'public' } }, forwardPublic);
  // Webhook deliveries carry no identity: the server checks the trigger's signature (over the bytes
  // as sent, and the sender's own Authorization for the bearer style), so both pass unchanged.
  // A delivery the server refused (a bad signature, a trigger that is not there) counts against
  // the sender's address as a refused API request does; an address past its limit gets 429 before
  // anything is forwarded. Accepted deliveries count nothing: a busy sender is never held back.
  app.post('/api/hooks/*', { config: { gate: 'public' }, bodyLimit: MAX_WEBHOOK_BODY_BYTES }, async (req, reply) => {
    const limited = apiLimit.over(`ip:${req.ip}`);
    if (!limited.ok) throw tooMany(reply, limited.retryAfterSeconds);
    const sent = await proxy.forward(req, reply, {});
    if (REFUSED_DELIVERY.has(reply.statusCode)) apiLimit.hit(`ip:${req.ip}`);
    return sent;
  });

  registerAuthRoutes(app, { provider, sessions, sessionMaxMs: settings.sessionMaxMs, log, auditLog, originOf });
  const servesGui = await registerGuiRoutes(app, provider !== null, deps.guiDir);

  // Expired sessions are refused when read; the sweep deletes their rows, on every gateway (no lease).
  const sweep: Periodic | null = db ? every({ db, log, metrics: createMetrics() }, GATEWAY_SESSION_SWEEP, (signal) => sweepGatewaySessions({ db, log }, signal)) : null;
  if (provider) await provider.start();
  else log.warn('gateway: no SVC_OIDC_ISSUER: people cannot log in; only the server\'s API tokens get in (bearer JWTs are refused)');

  return {
    app,
    provider,
    sessions,
    servesGui,
    async close() {
      provider?.stop();
      await sweep?.stop();
      await app.close();
      await proxy.close();
    },
  };
}
