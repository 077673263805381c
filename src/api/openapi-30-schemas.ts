import { isObject } from '../objects.ts';

/**
 * Rewrites, in place, every schema in `node` (a document's paths) that JSON Schema allows and
 * OpenAPI 3.0.3 does not, or reads otherwise, into its 3.0.3 form; validators and client
 * generators refuse the document, or the answers, otherwise:
 * - `null` joins the `enum` of a `nullable: true` schema (@fastify/swagger writes a valibot
 *   `nullable(picklist([...]))` as `{type, enum, nullable: true}`; `nullable` does not widen an enum);
 * - a `nullable: true` without a `type` (a nullable union, `{anyOf, nullable}`, which `nullable`
 *   leaves as it is in 3.0.3) is said by each of its branches;
 * - an empty `required` (an object whose fields are all optional) goes: 3.0.3 wants one or more.
 */
export function asOpenApi30Schemas(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) asOpenApi30Schemas(item);
    return;
  }
  if (!isObject(node)) return;
  const branches = node.anyOf ?? node.oneOf;
  if (node.nullable === true && node.type === undefined && Array.isArray(branches)) {
    for (const branch of branches) if (isObject(branch)) branch.nullable = true;
    delete node.nullable;
  }
  if (node.nullable === true && Array.isArray(node.enum) && !node.enum.includes(null)) node.enum.push(null);
  if (Array.isArray(node.required) && node.required.length === 0) delete node.required;
  for (const value of Object.values(node)) asOpenApi30Schemas(value);
}
