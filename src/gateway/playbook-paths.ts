// Playbook path patterns a caller may start (from a claim, SVC_OIDC_PATHS_CLAIM): pure.
import { claimAt } from './claims-role.ts';

/** Routes that start an execution of the playbook named by the body's `path`. */
export const RUN_ROUTES: ReadonlySet<string> = new Set(['/api/run/playbook', '/api/execute']);
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

/** The `path` of a JSON request body, or undefined when the body is not JSON or has none. */
export function bodyPath(body: unknown): string | undefined {
  if (!Buffer.isBuffer(body)) return undefined;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'path' in parsed && typeof parsed.path === 'string') return parsed.path;
  } catch {
    // not JSON: the server answers 400
  }
  return undefined;
}
