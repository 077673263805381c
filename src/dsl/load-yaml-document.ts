import { load, YAMLException } from 'js-yaml';
import { findUnstorable } from '../find-unstorable.ts';
import { expansionProblem } from './expansion-problem.ts';
import { mergeKeyProblems } from './merge-key-problems.ts';
import { findUnkeptNumber } from './non-finite.ts';
import type { Problem } from './reference-problems.ts';
import { yamlErrorAt } from './yaml-error-at.ts';

/**
 * Loads one YAML document that the catalog will store as JSON (a playbook, an `Mcp` server), or
 * the first problem that keeps it from being stored as written: a syntax error (with its line and
 * column), aliases that expand too far, text PostgreSQL cannot hold, merge keys, `.inf` / `.nan`,
 * whole numbers past ±(2^53 − 1).
 */
export function loadYamlDocument(text: string): { ok: true; raw: unknown } | { ok: false; problems: Problem[] } {
  let raw: unknown;
  try {
    raw = load(text);
  } catch (error) {
    const at = yamlErrorAt(text, error);
    return { ok: false, problems: [{ path: '$', message: describeYamlError(error, at), ...at }] };
  }
  // First, before anything else walks it: aliases may make a small text a huge value.
  const expansion = expansionProblem(raw);
  if (expansion) return { ok: false, problems: [{ path: '$', message: expansion }] };
  // YAML escapes ("\0", "\ud800") make strings that the catalog could not store.
  const unstorable = findUnstorable(raw);
  if (unstorable) return { ok: false, problems: [{ path: unstorable.path || '$', message: unstorable.message }] };
  const merges = mergeKeyProblems(raw);
  if (merges.length) return { ok: false, problems: merges };
  const unkept = findUnkeptNumber(raw);
  if (unkept) return { ok: false, problems: [{ path: unkept.path || '$', message: unkept.message }] };
  return { ok: true, raw };
}

function describeYamlError(error: unknown, at: { line: number; column: number } | undefined): string {
  if (error instanceof YAMLException) {
    const where = at ? ` at line ${at.line}, column ${at.column}` : '';
    return `YAML syntax error${where}: ${error.reason}`;
  }
  return `YAML syntax error: ${error instanceof Error ? error.message : String(error)}`;
}
