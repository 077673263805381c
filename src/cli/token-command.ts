import { parseArgs } from 'node:util';
import { API_TOKEN_CACHE_TTL_MS } from '../api/api-token-cache.ts';
import { newApiToken } from '../auth/api-token.ts';
import { ROLES, isRole } from '../auth/roles.ts';
import { loadConfig } from '../config.ts';
import { insertApiToken, listApiTokens, revokeApiToken, type ApiTokenRow } from '../db/api-token.repo.ts';
import { Db } from '../db/db.ts';
import { migrate } from '../db/migrate.ts';
import { createLogger } from '../log.ts';
import { openDatabase } from '../db/open-database.ts';
import { TOKEN_USAGE } from './token-usage.ts';
import { processEnvironment } from '../secret-environment.ts';

// Same rule as the table's CHECK (migrations/0008_api_tokens.sql), checked first for a clear message.
const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;

type Out = { write(text: string): unknown };
/** A parsed subcommand, run once the database is open; returns the exit code. */
type Action = (db: Db, out: Out, err: Out) => Promise<number>;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const shown = (row: ApiTokenRow) => ({
  name: row.name,
  role: row.role,
  prefix: row.prefix,
  created_at: iso(row.created_at),
  last_used_at: iso(row.last_used_at),
  revoked_at: iso(row.revoked_at),
});

/** Rows as aligned columns under a header; `-` for an empty cell. */
function table(header: string[], rows: (string | null)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => c ?? '-'))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n') + '\n';
}

function parseCreate(argv: string[]): Action | string {
  const { values, positionals } = parseArgs({ args: argv, options: { name: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' } }, strict: true, allowPositionals: true });
  if (positionals.length) return `create takes no positional arguments (got ${positionals.join(' ')})`;
  const name = values.name;
  const role = values.role;
  if (!name || !TOKEN_NAME.test(name)) return '--name expects 1-100 letters, digits, ".", "_", "@" or "-", starting with a letter or digit';
  if (!isRole(role)) return `--role expects one of ${ROLES.join(', ')}`;
  return async (db, out, err) => {
    const made = newApiToken();
    const row = await insertApiToken(db, { name, role, hash: made.hash, prefix: made.prefix });
    if (!row) {
      err.write(`svc token: a token named '${name}' exists (revoked tokens keep their names); choose another name\n`);
      return 1;
    }
    if (values.json) out.write(`${JSON.stringify({ ...shown(row), token: made.token }, null, 2)}\n`);
    else out.write(`created token '${row.name}' (role ${row.role}); it is shown only now, so store it where its user reads it:\n${made.token}\n`);
    return 0;
  };
}

function parseList(argv: string[]): Action | string {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, strict: true, allowPositionals: true });
  if (positionals.length) return `list takes no positional arguments (got ${positionals.join(' ')})`;
  return async (db, out) => {
    const rows = (await listApiTokens(db)).map(shown);
    if (values.json) out.write(`${JSON.stringify(rows, null, 2)}\n`);
    else if (!rows.length) out.write('no API tokens (svc token create --name NAME --role ROLE makes one)\n');
    else out.write(table(['NAME', 'ROLE', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'], rows.map((r) => [r.name, r.role, r.prefix, r.created_at, r.last_used_at, r.revoked_at])));
    return 0;
  };
}

function parseRevoke(argv: string[]): Action | string {
  const { positionals } = parseArgs({ args: argv, options: {}, strict: true, allowPositionals: true });
  if (positionals.length !== 1) return 'revoke expects one token name';
  const name = positionals[0];
  return async (db, out, err) => {
    const row = await revokeApiToken(db, name);
    if (!row) {
      err.write(`svc token: no token named '${name}'\n`);
      return 1;
    }
    out.write(`revoked token '${name}' (since ${iso(row.revoked_at)}); servers refuse it within ${API_TOKEN_CACHE_TTL_MS / 1000} s\n`);
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
    return err instanceof Error ? err.message : String(err); // parseArgs: unknown or malformed option
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
    err.write(`svc token: ${action}\nusage: ${TOKEN_USAGE}\n`);
    return 2;
  }
  const config = loadConfig(env);
  // Log lines go to stderr: stdout carries the token or the --json answer.
  const log = createLogger(config.SVC_LOG_LEVEL, process.stderr);
  // Beside a running `svc start` on the embedded default, its PostgreSQL serves.
  const database = await openDatabase(config, log, { shareRunning: true });
  const db = new Db(database.url, 2);
  try {
    await migrate(db);
    return await action(db, out, err);
  } finally {
    await db.close();
    await database.embedded?.stop();
  }
}
