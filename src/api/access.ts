// Who may call a route. Every route declares it in its options, `config: { access }`, so the
// auth hook (one place) decides for all routes and a route without a declaration is refused.

/** API token roles, each including the ones before it. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

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
