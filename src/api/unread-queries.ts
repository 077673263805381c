import type { RouteOptions } from 'fastify';
import * as v from 'valibot';
import { jsonSchema } from './validation.ts';

/**
 * An onRoute hook: an API route that reads no query parameter refuses one (422 naming it), as a
 * route that reads some refuses one it does not know. Dropped, `GET /api/executions/{id}?include=state`
 * or `POST /api/run/playbook?path=…` read as if the caller's parameter had been heard. Webhook
 * deliveries keep theirs: a sender's query is part of what the trigger's payload reads.
 */
export function refuseUnreadQueries(route: RouteOptions): void {
  if (!route.url.startsWith('/api/') || route.url.startsWith('/api/hooks/') || route.schema?.querystring !== undefined) return;
  route.schema = { ...route.schema, querystring: jsonSchema(v.strictObject({}, 'this route takes no query parameters')) };
}
