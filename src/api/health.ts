import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app.ts';

/**
 * GET /health, GET /api/health: ok when the database answers, 503 otherwise; bounded by the
 * ping's timeout, so a hung database or a full pool answers 503 instead of hanging the probe.
 */
export async function healthRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const handler = async (_req: unknown, reply: { code(n: number): unknown }) => {
    const dbOk = await deps.db.ping();
    if (!dbOk) reply.code(503);
    return { status: dbOk ? 'ok' : 'degraded', database: dbOk ? 'ok' : 'unreachable' };
  };
  app.get('/health', { schema: { hide: true } }, handler);
  app.get('/api/health', { schema: { tags: ['health'], summary: 'Service health' } }, handler);
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
