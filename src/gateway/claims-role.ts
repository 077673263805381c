// A caller's service role from an OpenID token's claims: pure.
import { roleAtLeast, type Role } from '../auth/roles.ts';
import { isObject } from '../objects.ts';

/** The value at a dotted claim path (`realm_access.roles`), or undefined (own properties only). */
export function claimAt(claims: Record<string, unknown>, path: readonly string[]): unknown {
  let at: unknown = claims;
  for (const key of path) {
    if (!isObject(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

/**
 * The highest service role the claims grant through `roleMap` (the claim at `path` is a string,
 * a space-separated string or an array of strings), or null when none maps.
 */
export function roleFromClaims(claims: Record<string, unknown>, path: readonly string[], roleMap: ReadonlyMap<string, Role>): Role | null {
  const value = claimAt(claims, path);
  const names = typeof value === 'string' ? value.split(/\s+/) : Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string') : [];
  let best: Role | null = null;
  for (const name of names) {
    const role = roleMap.get(name);
    if (role && (best === null || roleAtLeast(role, best))) best = role;
  }
  return best;
}
