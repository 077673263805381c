import type * as v from 'valibot';
import { didYouMean } from './unknown-field-message.ts';

// How a schema issue reads in a problem, for every document the catalog takes (playbooks, MCP servers).

/** A valibot issue path as problems name it: `workflow[2].tool[0].kind`, `$` for the root. */
export function formatPath(path: readonly v.IssuePathItem[] | undefined): string {
  if (!path || path.length === 0) return '$';
  let out = '';
  for (const item of path) {
    const key = item.key;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

// Valibot's default messages start with "Invalid "; schema-specific messages set in
// playbook.schema.ts are already written for people and are kept as they are.
export function describeIssue(issue: v.BaseIssue<unknown>): string {
  if (!issue.message.startsWith('Invalid ')) return issue.message;
  const expected = (issue.expected ?? '').replace(/^\((.*)\)$/, '$1');
  // A missing key; `received` says it too where a record re-issued the issue (own-keys-record.ts),
  // which valibot gives the record as its input and another kind.
  if ((issue.kind === 'schema' && issue.input === undefined) || issue.received === 'undefined') {
    return expected.startsWith('"') && expected.includes('|') ? `is required (one of ${expected})` : 'is required';
  }
  if (issue.type === 'picklist' || issue.type === 'variant' || issue.type === 'literal') {
    // A misspelt value (`kind: shel`) is named as a misspelt field is: with the one meant.
    return `must be one of ${expected}, got ${issue.received}${typeof issue.input === 'string' ? didYouMean(issue.input, quotedValues(expected)) : ''}`;
  }
  return `expected ${expected}, got ${issue.received}`;
}

/** The string values of valibot's expected text (`"http" | "postgres"`), for a did-you-mean. */
function quotedValues(expected: string): string[] {
  return [...expected.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
}
