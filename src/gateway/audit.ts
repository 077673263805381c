// The audit line of every state-changing request through the gateway: who, what, result; never a
// credential (the caller is named by subject or by a digest of its token) and never the query string.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../log.ts';
import { isSafeMethod } from './cors.ts';

/**
 * The logger audit lines go to: at info even when SVC_LOG_LEVEL is warn or error (an audit trail
 * does not depend on how chatty the rest is); nothing only when the log is silent.
 */
export function auditLogger(log: Logger): Logger {
  return log.level === 'silent' || log.isLevelEnabled('info') ? log : log.child({}, { level: 'info' });
}

// Requests whose line was written, so the response hook writes none again for them.
const audited = new WeakSet<FastifyRequest>();

/** True when `req`'s audit line was written. */
export const wasAudited = (req: FastifyRequest): boolean => audited.has(req);

/** Writes the audit line of `req` when its method changes state (or `always`, for logins and logouts). */
export function audit(log: Logger, req: FastifyRequest, reply: FastifyReply, who: string, always = false): void {
  if (!always && isSafeMethod(req.method)) return;
  audited.add(req);
  log.info({ audit: { who, method: req.method, path: req.url.split('?')[0], status: reply.statusCode, ip: req.ip } }, 'gateway audit');
}
