import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AppDeps } from './app-deps.ts';
import { adminRoutes } from './api/admin.ts';
import { agentRoutes } from './api/agents.ts';
import { mcpRoutes } from './api/mcp.ts';
import { executionSecretRoutes } from './api/execution-secrets.ts';
import { catalogRoutes } from './api/catalog.ts';
import { credentialRoutes } from './api/credentials.ts';
import { keychainRoutes } from './api/keychain.ts';
import { keychainRenewalRoutes } from './api/keychain-renewal.ts';
import { postgresRoutes } from './api/postgres.ts';
import { eventRoutes } from './api/events.ts';
import { batchRoutes } from './api/batch.ts';
import { executionRoutes } from './api/executions.ts';
import { refuseUnreadBodies, refuseUnreadQueries } from './api/unread-queries.ts';
import { executionControlRoutes } from './api/execution-control.ts';
import { stepRunRoutes } from './api/step-runs.ts';
import { executionStateRoutes } from './api/execution-state.ts';
import { workerRoutes } from './api/workers.ts';
import { registerDocs, registerRedoc } from './api/docs.ts';
import { installAuth } from './api/auth.ts';
import { answerClientError, answerFrameworkError, installErrorHandler } from './api/error-handler.ts';
import { guiRoutes } from './api/gui.ts';
import { healthRoutes } from './api/health.ts';
import { hookRoutes } from './api/hooks.ts';
import { triggerRoutes } from './api/triggers.ts';
import { limitRoutes } from './api/limits.ts';
import { installInputGuard } from './api/input-guard.ts';
import { endAnsweredUpgrades } from './end-answered-upgrades.ts';
import { installSecurityHeaders } from './security-headers.ts';
import { valibotCompiler } from './api/validation.ts';
import { bodyLimitBytes, MAX_PARAM_CHARS } from './body-limit.ts';
import { requestTimeoutOptions } from './request-timeout.ts';
import { WorkerDesk } from './api/worker-desk.ts';

// How long a closing server waits for requests in flight (a worker's report) before cutting them.
export const SHUTDOWN_GRACE_MS = 8_000; // below avvio's 10 s hook timeout

/** Builds the fastify app with every route; does not listen (tests use `inject` or listen on port 0). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const logger: FastifyBaseLogger = deps.log;
  const app = Fastify({
    loggerInstance: logger,
    // Per-request log lines would dominate the log at worker report rates; metrics count requests.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: bodyLimitBytes(deps.config),
    // A request must arrive within SVC_REQUEST_TIMEOUT_SECONDS (fastify's default: never).
    ...requestTimeoutOptions(deps.config.SVC_REQUEST_TIMEOUT_SECONDS),
    routerOptions: { maxParamLength: MAX_PARAM_CHARS },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    // Idle keep-alive sockets are closed by us (below) once requests in flight have answered.
    forceCloseConnections: true,
  });
  const closing = new AbortController();
  app.decorate('closingSignal', closing.signal);
  app.decorate('workerDesk', new WorkerDesk(deps));
  let inflight = 0;
  let drained: (() => void) | undefined;
  // Counted on the raw server: every response emits 'close', including ones whose client went away.
  app.server.on('request', (_req, res) => {
    inflight++;
    res.once('close', () => {
      if (--inflight === 0) drained?.();
    });
  });
  app.addHook('preClose', async () => {
    closing.abort();
    if (inflight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((r) => (drained = r)), new Promise<void>((r) => (timer = setTimeout(r, SHUTDOWN_GRACE_MS)))]);
      clearTimeout(timer);
    }
  });
  app.setValidatorCompiler(valibotCompiler);
  installInputGuard(app);
  installErrorHandler(app);
  installSecurityHeaders(app);
  app.addHook('onResponse', async (req, reply) => {
    deps.metrics.httpRequests.inc({ method: req.method, route: req.routeOptions.url ?? 'unknown', status_code: reply.statusCode });
  });
  endAnsweredUpgrades(app);
  installAuth(app, deps);
  await registerRoutes(app, deps);
  return app;
}

/** Registers every route of the API (each declares its access) on `app`. */
export async function registerRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await registerDocs(app);
  await registerRedoc(app);
  app.addHook('onRoute', refuseUnreadQueries);
  app.addHook('onRoute', refuseUnreadBodies);
  const plugins = [healthRoutes, catalogRoutes, executionRoutes, executionControlRoutes, stepRunRoutes, executionStateRoutes, eventRoutes, batchRoutes, workerRoutes, credentialRoutes, keychainRoutes, keychainRenewalRoutes, postgresRoutes, adminRoutes, agentRoutes, mcpRoutes, executionSecretRoutes, triggerRoutes, limitRoutes, hookRoutes, guiRoutes];
  for (const plugin of plugins) await app.register(async (scope) => plugin(scope, deps));
}
