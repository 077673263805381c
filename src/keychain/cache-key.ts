/** Scopes a stored keychain entry may have (the table's `scope_type` constraint). */
export const KEYCHAIN_SCOPES = ['global', 'local', 'shared'] as const;
export type KeychainScope = (typeof KEYCHAIN_SCOPES)[number];

/** A database id as the API carries it: bigint ids travel as strings. */
export type Id = string | number | bigint;

/** Renders an id as decimal text, refusing anything that is not a non-negative integer. */
function idText(id: Id, label: string): string {
  if (typeof id === 'bigint') {
    if (id < 0n) throw new Error(`${label} must be a non-negative integer, got ${id}`);
    return id.toString();
  }
  if (typeof id === 'number') {
    if (!Number.isSafeInteger(id) || id < 0) throw new Error(`${label} must be a non-negative integer, got ${id}`);
    return String(id);
  }
  if (!/^\d+$/.test(id)) throw new Error(`${label} must be a non-negative integer, got '${id}'`);
  return id;
}

/**
 * Primary key of a keychain row: `{name}:{catalog}:global`, `{name}:{catalog}:{execution}` (local)
 * or `{name}:{catalog}:shared:{root execution}` (the caller passes the ROOT id for shared).
 * Throws when local/shared lack an execution id.
 */
export function cacheKey(name: string, catalogId: Id, scope: KeychainScope, executionId: Id | null): string {
  if (name === '') throw new Error('keychain name must not be empty');
  const catalog = idText(catalogId, 'catalog_id');
  switch (scope) {
    case 'global':
      return `${name}:${catalog}:global`;
    case 'local':
      if (executionId === null) throw new Error(`keychain entry '${name}' has scope local and needs an execution_id`);
      return `${name}:${catalog}:${idText(executionId, 'execution_id')}`;
    case 'shared':
      if (executionId === null) {
        throw new Error(`keychain entry '${name}' has scope shared and needs the root execution_id`);
      }
      return `${name}:${catalog}:shared:${idText(executionId, 'execution_id')}`;
    default:
      throw new Error(`unknown keychain scope '${String(scope)}'; expected one of ${KEYCHAIN_SCOPES.join(', ')}`);
  }
}
