import { describe, expect, it } from 'vitest';
import { EXECUTION_COMMANDS } from '../../../src/cli/executions-usage.ts';

// The help of `svc list`, `status`, `logs`, `cancel`, ... put --json and --server in a column of
// their own (the 16th) under options described from the 18th (list, cancel) or the 26th (retry,
// signal): a ragged list to read. And `svc cancel --help` named --cascade in its usage line only,
// never saying what it does. Every option line now starts its description in one column, and
// every option of a usage line is described.
const OPTION_LINE = /^ {2}(-[^ ].*?) {2,}(\S)/;

describe('svc list|status|logs|cancel|pause|resume|retry|signal --help', () => {
  it.each(Object.entries(EXECUTION_COMMANDS))('%s: its options described in one column, each one of its usage line', (_name, command) => {
    const [usage, ...rest] = command.usage.split('\n');
    const options = rest.filter((l) => OPTION_LINE.test(l));
    const columns = new Set(options.map((l) => l.length - l.replace(/^ {2}-\S.*? {2,}/, '').length));
    expect(columns.size, options.join('\n')).toBe(1);
    // Continuation lines of a description start in that column too.
    const column = [...columns][0];
    const continued = rest.filter((l, i) => i > 0 && OPTION_LINE.test(rest[i - 1] ?? '') && /^ {4,}\S/.test(l));
    for (const line of continued) expect(line.length - line.trimStart().length, line).toBe(column);
    const named = [...usage.matchAll(/--[a-z-]+/g)].map((m) => m[0]);
    for (const flag of named) expect(options.some((l) => new RegExp(`^ {2}(-\\w, )?${flag}\\b`).test(l) || l.includes(`${flag}, `)), `${flag} of ${usage}`).toBe(true);
  });
});
