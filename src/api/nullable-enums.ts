import { isObject } from '../objects.ts';

/**
 * Adds `null` to the `enum` of every schema in `node` that is `nullable: true` (changes it in
 * place). @fastify/swagger writes a valibot `nullable(picklist([...]))` as `{type, enum, nullable:
 * true}`, and in OpenAPI 3.0.3 `nullable` does not widen an `enum`: validators (Ajv among them)
 * and client generators then refuse the `null` the route really answers.
 */
export function listNullInNullableEnums(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) listNullInNullableEnums(item);
    return;
  }
  if (!isObject(node)) return;
  if (node.nullable === true && Array.isArray(node.enum) && !node.enum.includes(null)) node.enum.push(null);
  for (const value of Object.values(node)) listNullInNullableEnums(value);
}
