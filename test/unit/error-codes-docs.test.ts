// The registry of client-visible codes (machines/error-codes.ts) against the docs: docs/operations.md
// lists every code with where it shows and its HTTP status, docs/playbook-dsl.md every code a
// `when:` can test; a code missing from a doc, or a doc's code the registry lacks, fails here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ALL_CODES, CODE, codeInfo, type CodeIn, type CodeInfo, type HttpCode, type ReportRefusalCode } from '../../machines/error-codes.ts';
import type { ErrorCode } from '../../src/errors.ts';
import type { EventResult } from '../../src/protocol.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The text of the `## heading` section of a doc, up to the next heading of its level or above. */
function section(doc: string, heading: string): string {
  const lines = readFileSync(path.join(ROOT, doc), 'utf8').split('\n');
  const start = lines.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`${doc} has no section "## ${heading}"`);
  const end = lines.findIndex((l, i) => i > start && /^#{1,2} /.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The rows of the section's tables whose first cell is a code in backticks, as their cells. */
function codeRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => /^\| `[a-z_]+` \|/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

const codeOf = (row: string[]) => row[0].slice(1, -1);
const INFO = new Map<string, CodeInfo>(ALL_CODES.map((c) => [c, codeInfo(c)]));
const taskOutcomeCodes = ALL_CODES.filter((c) => codeInfo(c).where.includes('task_outcome'));

describe('client-visible codes', () => {
  it('the registry: a meaning and a place each; a status and a message exactly for the HTTP ones', () => {
    expect(new Set(ALL_CODES).size).toBe(ALL_CODES.length);
    for (const c of ALL_CODES) {
      const info = codeInfo(c);
      expect(CODE[c]).toBe(c);
      expect(info.meaning.length, c).toBeGreaterThan(0);
      expect(info.where.length, c).toBeGreaterThan(0);
      const http = info.where.includes('http');
      expect(info.status !== undefined && info.message !== undefined, c).toBe(http);
      if (http) expect(info.status! >= 400 && info.status! < 600, c).toBe(true);
    }
    // The codes the issue names, among the rest.
    for (const c of ['stale_claim', 'not_holder', 'idempotency_key_reused', 'pool_stopped', 'sweep_in_progress']) expect(ALL_CODES).toContain(c);
    for (const c of ['template_error', 'credential_not_found', 'child_failed']) expect(taskOutcomeCodes).toContain(c);
  });

  it("an execution's code is one its parent's `when:` can test: a `playbook` task carries its child's error as its outcome", () => {
    // test/integration/engine/audit-child-step-cycle.test.ts: a child's step_cycle reaches its parent's arc.
    const executionCodes = ALL_CODES.filter((c) => codeInfo(c).where.includes('execution'));
    expect(executionCodes).toContain('step_cycle');
    expect(executionCodes.filter((c) => !codeInfo(c).where.includes('task_outcome'))).toEqual([]);
  });

  it('the server\'s types come from the registry', () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<HttpCode>();
    expectTypeOf<Extract<EventResult, { event_id: null }>['error']>().toEqualTypeOf<ReportRefusalCode>();
    expectTypeOf<ReportRefusalCode>().toEqualTypeOf<'stale_claim' | 'not_holder' | 'not_claimed' | 'unknown_command' | 'already_reported' | 'not_waiting' | 'signal_buffer_full'>();
    expectTypeOf<CodeIn<'batch'>>().toEqualTypeOf<'processing_timeout' | 'processing_error'>();
  });

  it('docs/operations.md lists every code once, with where it shows and its HTTP status', () => {
    const rows = codeRows(section('docs/operations.md', 'Error codes'));
    expect(rows.length).toBe(ALL_CODES.length);
    expect(rows.map(codeOf).sort()).toEqual([...ALL_CODES].sort());
    for (const row of rows) {
      const info = INFO.get(codeOf(row));
      if (!info) throw new Error(`${row[0]}: not in the registry`);
      expect(row[1], row[0]).toBe(info.where.join(', '));
      expect(row[2], row[0]).toBe(info.status === undefined ? '—' : String(info.status));
      expect(row[3].length, row[0]).toBeGreaterThan(0);
    }
  });

  it('docs/playbook-dsl.md lists every code a `when:` can test, once, and names the execution-only ones', () => {
    const text = section('docs/playbook-dsl.md', 'Error codes');
    const rows = codeRows(text);
    expect(rows.length).toBe(taskOutcomeCodes.length);
    expect(rows.map(codeOf).sort()).toEqual([...taskOutcomeCodes].sort());
    for (const row of rows) expect(row[1].length, row[0]).toBeGreaterThan(0);
    for (const c of ALL_CODES.filter((c) => codeInfo(c).where.includes('execution'))) expect(text).toContain(`\`${c}\``);
  });
});
