// Playbook path patterns a caller may start (from a claim, SVC_OIDC_PATHS_CLAIM): pure.
import { claimAt } from './claims-role.ts';

const MAX_PATTERNS = 100;

/**
 * The patterns the claims allow (`*` within one path segment, `**` across segments), or null when
 * `path` is not configured or the claim is absent (the caller is not restricted).
 */
export function pathPatterns(claims: Record<string, unknown>, path: readonly string[] | null): string[] | null {
  if (!path) return null;
  const value = claimAt(claims, path);
  if (value === undefined) return null;
  const list = typeof value === 'string' ? value.split(/[\s,]+/) : Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string') : [];
  return list.filter((p) => p !== '').slice(0, MAX_PATTERNS);
}

const toRegExp = (pattern: string): RegExp =>
  new RegExp(
    '^' +
      pattern
        .split('**')
        .map((part) => part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*'))
        .join('.*') +
      '$',
  );

/** True when `playbookPath` matches one of `patterns`. */
export function pathAllowed(playbookPath: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => toRegExp(p).test(playbookPath));
}

/**
 * The `path` of a JSON request body, read as the server reads it (a leading byte order mark is
 * skipped, as its JSON parser skips it), or undefined when the body is not JSON or has none.
 */
export function bodyPath(body: unknown): string | undefined {
  if (!Buffer.isBuffer(body)) return undefined;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''));
    if (typeof parsed === 'object' && parsed !== null && 'path' in parsed && typeof parsed.path === 'string') return parsed.path;
  } catch {
    // not JSON: the server answers 400
  }
  return undefined;
}

/**
 * The playbook path a `POST /api/triggers/{path}/{name}/{action}` starts an execution of (its
 * wildcard, `tail`, as the router decoded it), or undefined for an action that starts none
 * (pause, resume). Split as the server splits it: the last two segments are name and action.
 */
export function triggerStartPath(tail: string): string | undefined {
  const parts = tail.split('/');
  const action = parts.pop();
  parts.pop();
  return action === 'fire' || action === 'backfill' ? parts.join('/') : undefined;
}
