// Not every variable the parser reads was documented with its default and range: the spec's
// SVC_BATCH_STATUS_STREAM_POLL_SECONDS was named (docs/architecture.md) with neither, SVC_PORT only
// in the README, SVC_BATCH_ACCEPT_WORKERS's 1-to-64 nowhere. docs/operations.md's *Settings* now
// has a row for each, and its default must be the parser's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config.ts';

const page = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const section = page.slice(page.indexOf('\n## Settings\n'), page.indexOf('\n## ', page.indexOf('\n## Settings\n') + 1));
const rows = new Map(
  [...section.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1], m[2].trim()]),
);
// What a person writes where the parser keeps another form, and defaults kept outside the parser.
const WRITTEN: Record<string, string> = { SVC_ALLOW_SERVICE_DB_TASKS: 'false', SVC_SHELL_NETWORK: 'true', SVC_HOT_SNAPSHOTS: '10000' };

describe("docs/operations.md's Settings", () => {
  it('has a row for every variable the parser reads, and none it does not', () => {
    expect(section.length).toBeGreaterThan(100);
    expect(CONFIG_VARIABLES.filter((name) => !rows.has(name))).toEqual([]);
    expect([...rows.keys()].filter((name) => !CONFIG_VARIABLES.includes(name))).toEqual([]);
  });

  it("gives each the parser's default", () => {
    const defaults = loadConfig({}) as Record<string, unknown>;
    for (const name of CONFIG_VARIABLES) {
      const cell = rows.get(name) ?? '';
      const value = defaults[name];
      const written = WRITTEN[name] ?? (value === undefined || (Array.isArray(value) && value.length === 0) ? undefined : value === '' ? '' : String(value));
      if (written === undefined) expect(cell, name).toMatch(/^unset/);
      else if (written === '') expect(cell, name).toBe('empty');
      else expect(cell, name).toBe(`\`${written}\``);
    }
  });
});
