import type { SwaggerTransform } from '@fastify/swagger';

/**
 * A route's path as the OpenAPI document shows it, for a wildcard route (`/api/catalog/playbook/*`):
 * the document would show `{*}`, a parameter named `*`, where the spec names it
 * (`/api/catalog/playbook/{path}`). `url` uses `{name}` for each parameter; the parameters are
 * generated from it (strings, required). Only the document changes: the route still matches `*`.
 */
export function documentedAt(url: string): SwaggerTransform {
  return ({ schema }) => ({ schema, url });
}
