// Who may call a route. Every route declares it in its options, `config: { access }`, so the
// auth hook (src/api/auth.ts, one place) decides for all routes and a route without a
// declaration is refused.
import type { Role } from '../auth/roles.ts';

/**
 * `public`: anyone (health, docs). A role: callers with at least that role. `worker`: only the
 * worker token. `worker: true` beside a role also lets the worker token in (credential reads a
 * worker makes to run a task, keychain renewals).
 */
export type RouteAccess = { level: 'public' | 'worker' | Role; worker?: boolean };

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

/** The access of routes anyone may call (health, docs). */
export const PUBLIC: RouteAccess = Object.freeze({ level: 'public' });
