// `svc gateway`: the authenticating proxy, a process of its own in front of SVC_SERVER_URL, its
// sessions in the service database; `svc gateway revoke SUB` ends a person's sessions there.
import { parseArgs } from 'node:util';
import { bodyLimitBytes } from '../body-limit.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { Db } from '../db/db.ts';
import { deleteGatewaySessionsOf, gatewaySessionTablesExist } from '../db/gateway-session.repo.ts';
import { runningDatabaseUrl } from '../db/open-database.ts';
import { buildGateway, type Gateway } from '../gateway/gateway.ts';
import { gatewaySettings } from '../gateway/settings.ts';
import { createLogger } from '../log.ts';
import { listenFailure } from '../listen-failure.ts';
import { GATEWAY_USAGE } from './gateway-usage.ts';
import { optionErrorMessage, UsageError, usageSynopsis, writeUsageError } from './usage-error.ts';

/** Connections a gateway holds to the database: one short statement per request with a session. */
const GATEWAY_POOL_SIZE = 10;

type Out = { write(text: string): unknown };

/** Runs the gateway until SIGINT/SIGTERM (or `revoke`); returns the exit code. */
export async function gatewayCommand(argv: string[], out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  if (argv[0] === 'revoke') return revokeCommand(argv.slice(1), out, err);
  const { values } = parseArgs({ args: argv, options: { port: { type: 'string' }, host: { type: 'string' } }, strict: true });
  const config = loadConfig();
  const port = values.port === undefined ? config.SVC_GATEWAY_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port expects an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
  const settings = { ...gatewaySettings(config, port), ...(values.host ? { host: values.host } : {}) };
  const log = createLogger(config.SVC_LOG_LEVEL);
  // People's sessions live in the service database, so every gateway on it (and this one after a
  // restart) knows them; without a provider no one logs in and no database is opened.
  const url = settings.oidc ? await runningDatabaseUrl(config) : undefined;
  if (settings.oidc && !url) {
    throw new ConfigError('SVC_DATABASE_URL is required with SVC_OIDC_ISSUER: sessions are kept in the service database (beside a running `svc start`, its embedded one serves)');
  }
  const db = url ? new Db(url, GATEWAY_POOL_SIZE) : null;
  let gw: Gateway;
  try {
    gw = await buildGateway({ settings, log, bodyLimitBytes: bodyLimitBytes(config), db });
  } catch (e) {
    await db?.close();
    throw e;
  }
  const address = await gw.app.listen({ port: settings.port, host: settings.host }).catch(async (e: unknown) => {
    await gw.close();
    await db?.close();
    throw values.host
      ? listenFailure(e, '--host', values.host, (message) => new UsageError(message))
      : listenFailure(e, 'SVC_GATEWAY_HOST', settings.host, (message) => new ConfigError(`invalid ${message}`));
  });
  const lines = [
    `svc gateway listening on ${address}, in front of ${settings.upstream.origin}`,
    `  people   ${settings.oidc ? `OpenID Connect login at ${address}/auth/login (issuer ${settings.oidc.issuer.href}); sessions in the service database` : 'no SVC_OIDC_ISSUER: no login; only the server\'s API tokens get in'}`,
    `  GUI      ${gw.servesGui ? `${address}/` : 'gui/dist not built; not served'}`,
    `  health   ${address}/health   ready: ${address}/ready`,
  ];
  out.write(lines.join('\n') + '\n');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await gw.close();
  await db?.close();
  return 0;
}

/** `svc gateway revoke SUB [--json]`: ends every session of the person SUB on every gateway. 0 done, 2 usage. */
async function revokeCommand(argv: string[], out: Out, err: Out): Promise<number> {
  let positionals: string[];
  let json = false;
  try {
    let values;
    ({ positionals, values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, strict: true, allowPositionals: true }));
    json = values.json === true;
  } catch (e) {
    writeUsageError({ out, err }, 'gateway', optionErrorMessage(e, argv), usageSynopsis(GATEWAY_USAGE), argv);
    return 2;
  }
  if (positionals.length !== 1 || positionals[0].trim() === '') {
    writeUsageError({ out, err }, 'gateway', "revoke expects one subject (the provider's `sub` of the person)", usageSynopsis(GATEWAY_USAGE), argv);
    return 2;
  }
  const sub = positionals[0];
  const config = loadConfig();
  // The database the gateways use, never one of its own: a fresh embedded one holds no session,
  // and a revoke there would say "has no session" while every gateway still let the person in.
  const url = await runningDatabaseUrl(config);
  if (!url) {
    throw new ConfigError('SVC_DATABASE_URL is required for `svc gateway revoke`: it ends sessions in the database the gateways use (beside a running `svc start`, its embedded one serves)');
  }
  const db = new Db(url, 2);
  try {
    // No migration: the gateway's own login (docs/gateway.md, "Sessions") may only use its two
    // tables, and a revoke changes nothing else. The server's migrations made them, or none is.
    if (!(await gatewaySessionTablesExist(db))) {
      throw new ConfigError('the database has no gateway session tables (migrations/0022), so no session to end: is SVC_DATABASE_URL the one the gateways use?');
    }
    const n = await deleteGatewaySessionsOf(db, sub);
    if (json) out.write(`${JSON.stringify({ sub, sessions_ended: n })}\n`);
    else out.write(n ? `ended ${n} session${n === 1 ? '' : 's'} of ${sub}: every gateway refuses ${n === 1 ? 'its cookie' : 'their cookies'} from now on\n` : `${sub} has no session\n`);
    return 0;
  } finally {
    await db.close();
  }
}
