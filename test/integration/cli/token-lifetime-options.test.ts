// `svc token create --expires-in DURATION | --expires-at TIME`: what each stores (on a real
// PostgreSQL), and bad values refused as usage errors naming the option, before any database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenCommand } from '../../../src/cli/token-command.ts';
import { createMigratedDatabase, type TestDatabase } from '../../helpers/database.ts';
import type { Db } from '../../../src/db/db.ts';

async function token(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  let output = '';
  const sink = { write: (chunk: string) => (output += chunk) };
  const code = await tokenCommand(['create', ...args], env, sink, sink);
  return { code, output };
}

describe('svc token create with a lifetime', () => {
  let d: TestDatabase & { db: Db };
  beforeAll(async () => {
    d = await createMigratedDatabase();
  });
  afterAll(async () => d?.drop());

  it.each([
    ['90d', 90 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['30m', 30 * 60_000],
    ['1h30m', 90 * 60_000],
    ['3600', 3_600_000],
    ['45s', 45_000],
  ])('--expires-in %s: expires that long after it was made', async (text, ms) => {
    const name = `in-${text}`;
    const r = await token(['--name', name, '--role', 'viewer', '--expires-in', text], { SVC_DATABASE_URL: d.url });
    expect(r.code, r.output).toBe(0);
    const row = (await d.db.query<{ created_at: Date; expires_at: Date }>(`SELECT created_at, expires_at FROM core.api_token WHERE name = $1`, [name])).rows[0];
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(ms);
  });

  it('--expires-at: stored as given (a date alone is its UTC midnight); no option: never expires', async () => {
    const env = { SVC_DATABASE_URL: d.url };
    expect((await token(['--name', 'at-time', '--role', 'admin', '--expires-at', '2031-06-01T12:30:00+02:00'], env)).code).toBe(0);
    expect((await token(['--name', 'at-date', '--role', 'admin', '--expires-at', '2031-06-01', '--json'], env)).output).toMatch(/"expires_at": "2031-06-01T00:00:00\.000Z"/);
    expect((await token(['--name', 'no-end', '--role', 'admin'], env)).code).toBe(0);
    const rows = (await d.db.query<{ name: string; expires_at: Date | null }>(`SELECT name, expires_at FROM core.api_token WHERE name IN ('at-time', 'at-date', 'no-end') ORDER BY id`)).rows;
    expect(rows.map((r) => [r.name, r.expires_at?.toISOString() ?? null])).toEqual([
      ['at-time', '2031-06-01T10:30:00.000Z'],
      ['at-date', '2031-06-01T00:00:00.000Z'],
      ['no-end', null],
    ]);
  });

  it('refuses a bad lifetime with exit code 2, naming the option, before opening any database', async () => {
    const nowhere = { SVC_DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' };
    const cases: [string[], RegExp][] = [
      [['--expires-in', '3x'], /--expires-in expects a duration .*got "3x"/],
      [['--expires-in', ''], /--expires-in expects a duration/],
      [['--expires-in=-5m'], /--expires-in expects a duration/],
      [['--expires-in', '-5m'], /^svc token: --expires-in needs a value \(a value starting with - goes after =: --expires-in=-5m\)\n/], // parseArgs: a value that looks like an option
      [['--expires-in', '0s'], /--expires-in must be more than 0/],
      [['--expires-in', '0'], /--expires-in must be more than 0/],
      [['--expires-in', '999999999d'], /--expires-in must be at most/],
      [['--expires-at', 'next tuesday'], /--expires-at expects an ISO 8601 time .*got "next tuesday"/],
      [['--expires-at', '2031-02-30'], /--expires-at expects an ISO 8601 time/],
      [['--expires-at', '2031-06-01T12:30:00'], /--expires-at expects an ISO 8601 time/],
      [['--expires-at', '2020-01-01T00:00:00Z'], /--expires-at must be in the future/],
      [['--expires-in', '1d', '--expires-at', '2031-06-01'], /--expires-in and --expires-at/],
    ];
    for (const [extra, message] of cases) {
      const r = await token(['--name', 'x', '--role', 'viewer', ...extra], nowhere);
      expect(r.code, `${extra.join(' ')}: ${r.output}`).toBe(2);
      expect(r.output, extra.join(' ')).toMatch(message);
      expect(r.output).toMatch(/usage: svc token/);
    }
  });
});
