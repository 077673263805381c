import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { API_TOKEN_CACHE_TTL_MS } from '../api/api-token-cache.ts';
import { newApiToken } from '../auth/api-token.ts';
import { ROLES, isRole } from '../auth/roles.ts';
import { loadConfig } from '../config.ts';
import { insertApiToken, listApiTokens, revokeApiToken, type ApiTokenExpiry, type ApiTokenRow } from '../db/api-token.repo.ts';
import { Db } from '../db/db.ts';
import { migrate, sayMigrated } from '../db/migrate.ts';
import { createLogger } from '../log.ts';
import { openDatabase } from '../db/open-database.ts';
import { durationMs } from '../dsl/duration.ts';
import { StartTimeText } from '../start-time-text.ts';
import { TOKEN_USAGE } from './token-usage.ts';
import { commandErrorJson, optionErrorMessage, usageSynopsis, writeUsageError } from './usage-error.ts';
import { processEnvironment } from '../secret-environment.ts';

// Same rule as the table's CHECK (migrations/0008_api_tokens.sql), checked first for a clear message.
const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;
// A longer lifetime is a mistake in units (no expiry is the way to say forever).
const MAX_LIFETIME_DAYS = 36_500;
// PostgreSQL's check_violation: the table refuses an expiry not after the creation (migrations/0042).
const CHECK_VIOLATION = '23514';

type Out = { write(text: string): unknown };
/** A parsed subcommand, run once the database is open; returns the exit code. */
type Action = (db: Db, out: Out, err: Out) => Promise<number>;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
// What every token shows; a listing adds its expiry, `create` only when it has one.
const basics = (row: ApiTokenRow) => ({
  name: row.name,
  role: row.role,
  prefix: row.prefix,
  created_at: iso(row.created_at),
  last_used_at: iso(row.last_used_at),
  revoked_at: iso(row.revoked_at),
});
const shown = (row: ApiTokenRow) => ({ ...basics(row), expires_at: iso(row.expires_at), expired: row.expired });

/** Rows as aligned columns under a header; `-` for an empty cell. */
function table(header: string[], rows: (string | null)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => c ?? '-'))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n') + '\n';
}

/**
 * A new token's lifetime from `--expires-in` (a duration as `svc list --since` and playbooks take
 * it: 90d, 12h, 30m, 1h30m, or bare seconds) or `--expires-at` (ISO 8601 with a zone, or a date:
 * its UTC midnight; in the future); undefined for neither (it never expires); a message naming
 * the option when bad.
 */
function tokenExpiry(expiresIn: string | undefined, expiresAt: string | undefined, now = Date.now()): ApiTokenExpiry | undefined | string {
  if (expiresIn !== undefined && expiresAt !== undefined) return '--expires-in and --expires-at both set the expiry: give one of them';
  if (expiresIn !== undefined) {
    const ms = durationMs(/^\d+(\.\d+)?$/.test(expiresIn) ? Number(expiresIn) : expiresIn);
    if (ms === undefined) return `--expires-in expects a duration (90d, 12h, 30m, 1h30m, or seconds: 3600), got ${JSON.stringify(expiresIn)}`;
    if (ms <= 0) return '--expires-in must be more than 0 (leave it out for a token that never expires)';
    if (ms > MAX_LIFETIME_DAYS * 86_400_000) return `--expires-in must be at most ${MAX_LIFETIME_DAYS}d`;
    return { inMs: ms };
  }
  if (expiresAt !== undefined) {
    if (!v.is(StartTimeText, expiresAt)) return `--expires-at expects an ISO 8601 time with a zone (2026-12-31T18:00:00Z) or a date (2026-12-31, its UTC midnight), got ${JSON.stringify(expiresAt)}`;
    const at = new Date(expiresAt);
    if (at.getTime() <= now) return `--expires-at must be in the future (${at.toISOString()} has passed)`;
    return { at };
  }
  return undefined;
}

const OWN_CREATE = { name: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' }, 'expires-in': { type: 'string' }, 'expires-at': { type: 'string' } } as const;

function parseCreate(argv: string[]): Action | string {
  const { values, positionals } = parseArgs({ args: argv, options: OWN_CREATE, strict: true, allowPositionals: true });
  if (positionals.length) return `create takes no positional arguments (got ${positionals.join(' ')})`;
  const name = values.name;
  const role = values.role;
  if (!name || !TOKEN_NAME.test(name)) return '--name expects 1-100 letters, digits, ".", "_", "@" or "-", starting with a letter or digit';
  if (!isRole(role)) return `--role expects one of ${ROLES.join(', ')}`;
  const expires = tokenExpiry(values['expires-in'], values['expires-at']);
  if (typeof expires === 'string') return expires;
  return async (db, out, err) => {
    const made = newApiToken();
    let row: ApiTokenRow | undefined;
    try {
      row = await insertApiToken(db, { name, role, hash: made.hash, prefix: made.prefix, expires });
    } catch (e) {
      // An --expires-at that passed between the check above and the insert.
      if (e instanceof Error && 'code' in e && e.code === CHECK_VIOLATION) {
        err.write('svc token: --expires-at must be in the future\n');
        return 2;
      }
      throw e;
    }
    if (!row) return refused(values.json === true, `a token named '${name}' exists (revoked tokens keep their names); choose another name`, out, err);
    // Without a lifetime the answer is as before lifetimes existed: expires_at only when there is one.
    const expires_at = iso(row.expires_at);
    if (values.json) out.write(`${JSON.stringify({ ...basics(row), ...(expires_at ? { expires_at } : {}), token: made.token }, null, 2)}\n`);
    else out.write(`created token '${row.name}' (role ${row.role}${expires_at ? `, expires ${expires_at}` : ''}); it is shown only now, so store it where its user reads it:\n${made.token}\n`);
    return 0;
  };
}

/** A create or revoke the database refused: exit 1, said on stderr and, with --json, as JSON on stdout too (a program reads why there). */
function refused(json: boolean, message: string, out: Out, err: Out): number {
  if (json) out.write(commandErrorJson('token', message));
  err.write(`svc token: ${message}\n`);
  return 1;
}

function parseList(argv: string[]): Action | string {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, strict: true, allowPositionals: true });
  if (positionals.length) return `list takes no positional arguments (got ${positionals.join(' ')})`;
  return async (db, out) => {
    const rows = (await listApiTokens(db)).map(shown);
    if (values.json) out.write(`${JSON.stringify(rows, null, 2)}\n`);
    else if (!rows.length) out.write('no API tokens (svc token create --name NAME --role ROLE makes one)\n');
    else {
      // EXPIRES only once some token has a lifetime: without one the table is as it always was.
      const expiries = rows.some((r) => r.expires_at !== null);
      const expiry = (r: (typeof rows)[number]): string[] => (!expiries ? [] : [r.expires_at === null ? 'never' : `${r.expires_at}${r.expired ? ' (expired)' : ''}`]);
      const header = ['NAME', 'ROLE', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED', ...(expiries ? ['EXPIRES'] : [])];
      out.write(table(header, rows.map((r) => [r.name, r.role, r.prefix, r.created_at, r.last_used_at, r.revoked_at, ...expiry(r)])));
    }
    return 0;
  };
}

function parseRevoke(argv: string[]): Action | string {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, strict: true, allowPositionals: true });
  if (positionals.length !== 1) return 'revoke expects one token name';
  const name = positionals[0];
  return async (db, out, err) => {
    const row = await revokeApiToken(db, name);
    if (!row) return refused(values.json === true, `no token named '${name}'`, out, err);
    if (values.json) out.write(`${JSON.stringify(shown(row), null, 2)}\n`);
    else out.write(`revoked token '${name}' (since ${iso(row.revoked_at)}); servers refuse it within ${API_TOKEN_CACHE_TTL_MS / 1000} s\n`);
    return 0;
  };
}

function parse(argv: string[]): Action | string {
  const [sub, ...rest] = argv;
  try {
    if (sub === 'create') return parseCreate(rest);
    if (sub === 'list') return parseList(rest);
    if (sub === 'revoke') return parseRevoke(rest);
  } catch (err) {
    return optionErrorMessage(err, argv); // parseArgs: unknown or malformed option
  }
  return sub ? `unknown subcommand '${sub}'` : 'expects a subcommand: create, list or revoke';
}

/**
 * `svc token create|list|revoke`: API tokens in the database the config names (the arguments
 * are checked before the database is opened). Returns the exit code: 0, 1 refused, 2 usage.
 */
export async function tokenCommand(
  argv: string[],
  env: Readonly<Record<string, string | undefined>> = processEnvironment(),
  out: Out = process.stdout,
  err: Out = process.stderr,
): Promise<number> {
  const action = parse(argv);
  if (typeof action === 'string') {
    writeUsageError({ out, err }, 'token', action, usageSynopsis(TOKEN_USAGE), argv);
    return 2;
  }
  const config = loadConfig(env);
  // Log lines go to stderr: stdout carries the token or the --json answer.
  const log = createLogger(config.SVC_LOG_LEVEL, process.stderr);
  // Beside a running `svc start` on the embedded default, its PostgreSQL serves.
  const database = await openDatabase(config, log, { shareRunning: true });
  const db = new Db(database.url, 2);
  try {
    // It migrates as a start does (a token made before the first start needs the schema), and
    // says so: run against a database older servers still serve, it upgrades it.
    sayMigrated(log, await migrate(db, undefined, { log }));
    return await action(db, out, err);
  } finally {
    await db.close();
    await database.embedded?.stop();
  }
}
