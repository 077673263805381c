// A client generated from the OpenAPI document (openapi-generator, orval) names each method after
// its operation's operationId; without one it makes up a name of its own, which changes with the
// generator. Each operation gets one here, read from its method and path, so a route needs none.

import { isObject } from '../objects.ts';

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

const pascal = (word: string): string =>
  word
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');

/**
 * The operationId of `method` at the document's `path`: the method, then the path's segments in
 * camelCase without its leading `/api`, a parameter as `By<Name>` (`And<Name>` after another):
 * `POST /api/executions/{id}/cancel` is `postExecutionsByIdCancel`.
 */
export function operationIdOf(method: string, path: string): string {
  const segments = path.split('/').filter(Boolean);
  if (segments[0] === 'api') segments.shift();
  let id = method.toLowerCase();
  let afterParameter = false;
  for (const segment of segments) {
    const parameter = /^\{(.+)\}$/.exec(segment);
    id += parameter ? `${afterParameter ? 'And' : 'By'}${pascal(parameter[1])}` : pascal(segment);
    afterParameter = parameter !== null;
  }
  return id;
}

/**
 * Gives each operation of `paths` (an OpenAPI document's) without an operationId the one
 * operationIdOf derives (a route's own, `schema.operationId`, is kept). Throws when two
 * operations would share one: a document must not, and a generated client would lose a method.
 */
export function nameOperations(paths: unknown): void {
  const seen = new Map<string, string>();
  for (const [path, operations] of Object.entries(isObject(paths) ? paths : {})) {
    for (const [method, operation] of Object.entries(isObject(operations) ? operations : {})) {
      if (!METHODS.has(method) || !isObject(operation)) continue;
      const id = typeof operation.operationId === 'string' ? operation.operationId : operationIdOf(method, path);
      const where = `${method.toUpperCase()} ${path}`;
      const other = seen.get(id);
      if (other !== undefined) throw new Error(`operationId ${id} of ${where} is also ${other}'s: declare another in one route's schema (operationId)`);
      seen.set(id, where);
      operation.operationId = id;
    }
  }
}
