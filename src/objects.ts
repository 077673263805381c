// What "an object" means when narrowing unknown input (parsed JSON, event contexts, answers from
// other services): one definition for the whole codebase, pure, importable by every layer.

/** An object that is not an array (nor null): JSON's object. Class instances pass; see isPlainObject. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` itself when it is an object (isObject), else a new empty one: for optional object fields. */
export function asObject(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : {};
}

/**
 * A mapping of plain data: an object whose prototype is Object.prototype or null. Arrays, dates,
 * errors and other class instances are not (templates and log redaction walk only these).
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
