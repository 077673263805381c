import type { FastifyRequest, RouteOptions } from 'fastify';
import * as v from 'valibot';
import { ServiceError } from '../errors.ts';
import { isObject } from '../objects.ts';
import { jsonSchema } from './validation.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The handler checks its body itself (one route, several bodies: a trigger's actions), so refuseUnreadBodies leaves it. */
    readsBody?: true;
  }
}

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

const NO_BODY = 'this route takes no body: send none, or {}';
// Methods whose body fastify parses; a GET's is never read (nor parsed) by any route.
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * An onRoute hook, as refuseUnreadQueries for bodies: a route that declares no body refuses one
 * with fields, or one that is no object (422 naming them). Dropped, `DELETE
 * /api/keychain/{id}/{name}` with `{"scope_type": "local"}` deleted the global entry and a sweep
 * sent `{"dry_run": true}` swept for real. No body, or `{}` (the doctor's sweep), is taken as
 * before. Webhook deliveries are data, and a route that checks its own body says so (`readsBody`).
 * A hook, not a body schema: the OpenAPI document keeps saying the route takes no body.
 */
export function refuseUnreadBodies(route: RouteOptions): void {
  if (!route.url.startsWith('/api/') || route.url.startsWith('/api/hooks/') || route.schema?.body !== undefined || route.config?.readsBody) return;
  if (![route.method].flat().some((m) => BODY_METHODS.has(m))) return;
  const refuse = async (req: FastifyRequest): Promise<void> => {
    const body: unknown = req.body;
    if (body === undefined || (isObject(body) && Object.keys(body).length === 0)) return;
    const errors = isObject(body) ? Object.keys(body).map((key) => `${key}: unknown field (${NO_BODY})`) : [`body: ${NO_BODY}`];
    throw new ServiceError('unprocessable', { message: 'invalid body', errors });
  };
  route.preValidation = [...[route.preValidation ?? []].flat(), refuse];
}
