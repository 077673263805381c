import * as v from 'valibot';
import { ServiceError } from '../errors.ts';
import { MAX_TRIGGER_NAME_CHARS } from '../triggers/trigger.schema.ts';
import { VERSIONS_SUFFIX } from './catalog-versions.ts';
import { STATECHART_SUFFIX } from './playbook-statechart.ts';

const PATH_RE = /^[A-Za-z0-9_.\-]+(\/[A-Za-z0-9_.\-]+)*$/;
// Paths are keys of btree indexes, whose entries PostgreSQL caps near 2,700 bytes.
export const MAX_PATH_CHARS = 512;
const NAMES = `slash-separated names of letters, digits, _ . - (no name . or ..), at most ${MAX_PATH_CHARS} characters`;

/**
 * True when a segment of `path` is empty, `.` or `..`: clients normalise such a URL
 * (GET /api/catalog/playbook/../etc asks for /api/catalog/etc), so no route could reach the entry.
 */
export function hasDotSegment(path: string): boolean {
  return path.split('/').some((s) => s === '' || s === '.' || s === '..');
}

/**
 * Why `path` cannot name a catalog entry, or undefined when it can. A path ending in /statechart
 * could not be read back: GET /api/catalog/playbook/{path}/statechart answers {path}'s statechart.
 */
export function catalogPathProblem(path: string): string | undefined {
  if (!PATH_RE.test(path) || path.length > MAX_PATH_CHARS || hasDotSegment(path)) return `must be ${NAMES}`;
  if (path.endsWith(STATECHART_SUFFIX)) return `must not end in ${STATECHART_SUFFIX}, which asks for the statechart of the path before it`;
  if (path.endsWith(VERSIONS_SUFFIX)) return `must not end in ${VERSIONS_SUFFIX}, which asks for the versions of the path before it`;
  return undefined;
}

/** A catalog path given to register at (POST /api/catalog/playbook `path`). */
export const catalogPath = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(MAX_PATH_CHARS), v.regex(PATH_RE, `must be ${NAMES}`), v.check((p) => !hasDotSegment(p), `must be ${NAMES}`));

/**
 * A catalog path a start names (its body's `path`): a segment empty, `.` or `..`, or more characters
 * than a registration takes, is refused (422 naming the field): no entry can be there, and a 404
 * would echo the whole value back.
 */
export const startPath = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(MAX_PATH_CHARS, `must be at most ${MAX_PATH_CHARS} characters (a catalog path's limit)`),
  v.check((p) => !hasDotSegment(p), 'must be slash-separated names: none empty, . or ..'),
);

/**
 * A route's catalog path parameter: 422 naming `field` when it is longer than a registration
 * takes (no entry can be there: an answer 404 would say it might be) or a segment is empty, `.`
 * or `..`.
 */
export function requireReachablePath(path: string, field = 'path'): void {
  if (path.length > MAX_PATH_CHARS) {
    throw new ServiceError('unprocessable', {
      code: 'unprocessable',
      message: `${field}: a catalog path is at most ${MAX_PATH_CHARS} characters`,
      errors: [`${field}: must be at most ${MAX_PATH_CHARS} characters (got ${path.length})`],
    });
  }
  if (!hasDotSegment(path)) return;
  throw new ServiceError('unprocessable', { code: 'unprocessable', message: `${field}: a catalog path has no empty, . or .. segment`, errors: [`${field}: must be slash-separated names: none empty, . or ..`] });
}

/**
 * A route's trigger name parameter: 422 naming `field` when it is longer than a registration
 * takes (no trigger can have it: a 404 would say it might, and echo it back).
 */
export function requireReachableTriggerName(name: string, field = 'name'): void {
  if (name.length <= MAX_TRIGGER_NAME_CHARS) return;
  throw new ServiceError('unprocessable', {
    code: 'unprocessable',
    message: `${field}: a trigger name is at most ${MAX_TRIGGER_NAME_CHARS} characters`,
    errors: [`${field}: must be at most ${MAX_TRIGGER_NAME_CHARS} characters (got ${name.length})`],
  });
}
