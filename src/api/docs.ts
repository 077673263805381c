import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { PUBLIC, type RouteAccess } from './access.ts';
import { DOCS_POLICY } from '../security-headers.ts';
import * as v from 'valibot';
import { answerSerializer, valibotSchemaOf } from './validation.ts';
import { isObject } from '../objects.ts';
import { asOpenApi30Schemas } from './openapi-30-schemas.ts';
import { INTEGER_PARAMETERS, integerParametersOf, typeIntegerParameters } from './integer-parameters.ts';
import { nameOperations } from './operation-ids.ts';

const require = createRequire(import.meta.url);

const REDOC_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Orchestrator API — ReDoc</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{margin:0;padding:0}</style></head>
<body><redoc spec-url="/docs/json"></redoc>
<script src="/redoc/redoc.standalone.js"></script></body>
</html>`;

const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const LOGO_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#32329f"/></svg>';

/** The OpenAPI document (from the routes' schemas, answers included), Swagger UI at /docs and ReDoc at /redoc, all served locally. */
export async function registerDocs(app: FastifyInstance): Promise<void> {
  // Before any route: the routes' response schemas are for this document only (see answerSerializer).
  app.setSerializerCompiler(answerSerializer);
  // What the document cannot read from a route's JSON Schemas, the route says to it (finishOperations):
  // a body it takes a request without, parameters that are integers sent as text.
  app.addHook('onRoute', (route) => {
    const body = route.schema?.body;
    const schema = isObject(body) ? valibotSchemaOf(body) : undefined;
    if (schema && v.safeParse(schema, undefined).success) Object.assign(route.schema ?? {}, { [OPTIONAL_BODY]: true });
    const integers = integerParametersOf(route.schema);
    if (integers) Object.assign(route.schema ?? {}, { [INTEGER_PARAMETERS]: integers });
    // The credential the auth hook takes on this route (its declared access), so a client made
    // from the document sends the right one: none to health and webhook routes, the worker token
    // to worker routes (the document's default is the API token).
    const security = securityOf(route.config?.access);
    if (route.schema && security) route.schema.security = security;
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Workflow orchestration service',
        description: 'Playbook catalog, executions over an append-only event log, workers, credentials and keychain.',
        version: '1',
      },
      // The "Authorize" button of /docs: with SVC_AUTH=token, paste an API token there.
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API token (`svc token create`) of a role the route admits (docs/operations.md, "Who may call")' },
          worker: { type: 'http', scheme: 'bearer', description: 'The worker token (SVC_WORKER_TOKEN, or SVC_DATA_DIR/worker.token of the embedded default), in every SVC_AUTH mode' },
        },
      },
      security: [{ bearer: [] }],
    },
    transformObject: (doc) => ('openapiObject' in doc ? finishOperations(doc.openapiObject) : doc.swaggerObject),
  });
  // The UI's routes (page, assets, the OpenAPI JSON/YAML) are the plugin's, registered without a
  // declaration: its scope marks every one public.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, access: PUBLIC };
    });
    // Its page's policy (the app's hook, which runs first, gave every answer the one that loads nothing).
    docs.addHook('onSend', async (_req, reply, payload) => {
      if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) reply.header('content-security-policy', DOCS_POLICY);
      return payload;
    });
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { validatorUrl: null, deepLinking: true } });
  });
}

/**
 * The OpenAPI security requirements of a route with `access`, or undefined for the document's
 * default (the API token): none for a public route, the worker token where only it is taken, and
 * either where a role's API token or the worker token is.
 */
function securityOf(access: RouteAccess | undefined): Record<string, string[]>[] | undefined {
  if (!access) return undefined;
  if (access.level === 'public') return [];
  if (access.level === 'worker') return [{ worker: [] }];
  return access.worker ? [{ bearer: [] }, { worker: [] }] : undefined;
}

// An operation's extension (@fastify/swagger copies a route schema's x- keys to its operation).
const OPTIONAL_BODY = 'x-optional-body';

/**
 * `doc` with each request body a route takes a request without (a cancel, a retry, a cleanup:
 * `v.optional(...)`) marked `required: false`, where @fastify/swagger marks every body required,
 * integer parameters typed as integers (integer-parameters.ts), schemas in the form OpenAPI
 * 3.0.3 reads (openapi-30-schemas.ts), and each operation named (operation-ids.ts). Changes `doc` in place.
 */
function finishOperations<D extends { paths?: object }>(doc: D): D {
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of isObject(operations) ? Object.values(operations) : []) {
      if (!isObject(operation)) continue;
      typeIntegerParameters(operation);
      if (!(OPTIONAL_BODY in operation)) continue;
      delete operation[OPTIONAL_BODY];
      if (isObject(operation.requestBody)) operation.requestBody.required = false;
    }
  }
  asOpenApi30Schemas(doc.paths);
  nameOperations(doc.paths);
  return doc;
}

/** Routes for the ReDoc page; registered at the root so it is outside the swagger plugin's scope. */
export async function registerRedoc(app: FastifyInstance): Promise<void> {
  const bundlePath = require.resolve('redoc/bundles/redoc.standalone.js');
  let bundle: Buffer | undefined;
  app.get('/redoc', { schema: { hide: true }, config: { access: PUBLIC } }, async (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', DOCS_POLICY).send(REDOC_PAGE),
  );
  app.get('/redoc/logo-mini.svg', { schema: { hide: true }, config: { access: PUBLIC } }, async (_req, reply) =>
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(LOGO_SVG),
  );
  app.get('/redoc/redoc.standalone.js', { schema: { hide: true }, config: { access: PUBLIC } }, async (_req, reply) => {
    // The bundle's footer loads its logo from a CDN with no option to turn it off; serve it here.
    bundle ??= Buffer.from((await readFile(bundlePath, 'utf8')).replaceAll(REDOC_CDN_LOGO, '/redoc/logo-mini.svg'));
    return reply.type('application/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').send(bundle);
  });
}
