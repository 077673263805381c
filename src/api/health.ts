import type { FastifyInstance, FastifyReply } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { RETRY_AFTER_SECONDS } from '../errors.ts';
import { PUBLIC } from './access.ts';
import { responses } from './answers.ts';

const healthAnswer = v.object({
  status: v.picklist(['ok', 'degraded']),
  database: v.picklist(['ok', 'read_only', 'unreachable']),
  bus: v.picklist(['ok', 'disconnected']),
});

/**
 * GET /health, GET /api/health: ok when the database answers and takes writes, 503 otherwise
 * (`read_only`: a standby after a failover, where every start would be refused); bounded by the
 * ping's timeout, so a hung database or a full pool answers 503 instead of hanging the probe.
 * `bus` tells whether the command bus hears notifications; a deaf bus (reconnecting) is
 * `degraded` but stays 200: the server still serves every request (claimers fall back to their
 * poll interval until it is back).
 */
export async function healthRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const handler = async (_req: unknown, reply: FastifyReply): Promise<v.InferOutput<typeof healthAnswer>> => {
    const database = await deps.db.ping();
    const busOk = deps.bus.connected;
    if (database !== 'ok') reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS));
    return { status: database === 'ok' && busOk ? 'ok' : 'degraded', database, bus: busOk ? 'ok' : 'disconnected' };
  };
  // Both are the spec's endpoints, so both are in the OpenAPI document.
  // Its own operationId: the one derived from its path (operation-ids.ts) is /api/health's.
  app.get('/health', { schema: { tags: ['health'], operationId: 'getServerHealth', summary: 'Server health (as GET /api/health)', response: responses({ 200: healthAnswer, 503: healthAnswer }) }, config: { access: PUBLIC } }, handler);
  app.get('/api/health', { schema: { tags: ['health'], summary: 'Service health', response: responses({ 200: healthAnswer, 503: healthAnswer }) }, config: { access: PUBLIC } }, handler);
  // Viewer, not public: counts by route and status tell an outsider what the service does. In
  // SVC_AUTH=none (loopback only) that is everyone on this machine; a scraper elsewhere sends a token.
  const metricsAnswer = { mediaType: 'text/plain', schema: v.string(), description: 'Prometheus text exposition: svc_* metrics (batch intake, claims, HTTP) and the process defaults' };
  app.get('/metrics', { schema: { tags: ['health'], summary: 'Metrics exposition (Prometheus text)', response: responses({ 200: metricsAnswer }) }, config: { access: { level: 'viewer' } } }, async (_req, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
