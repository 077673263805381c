import { exactDurationMs } from '../dsl/duration.ts';
import { LIMIT_NAME, LIMIT_NAME_RULE } from '../flow/limit-name.ts';
import { MAX_PERIOD_SECONDS, MIN_PERIOD_SECONDS, WHOLE_MS_RULE, wholeMs } from '../flow/rate-period.ts';
import { ServerError, type ServerClient } from '../worker/server-client.ts';
import { cliClient, noAnswerJson, parseCliArgs, refusalJson, runCli, UsageError, type Out } from './api-command.ts';
import { usageSynopsis } from './usage-error.ts';
import { EXIT, refusalExitCode } from './executions-usage.ts';
import { LimitDetail, LimitList, LimitPut, limitPartsText, limitsTable, limitText } from './limits-table.ts';
import { LIMITS_USAGE } from './limits-usage.ts';
import { describeServerError } from './describe-server-error.ts';
import { checked, UnexpectedAnswerError } from './run-api.ts';

const SUBCOMMANDS = ['list', 'show', 'set', 'delete'] as const;
type Sub = (typeof SUBCOMMANDS)[number];

const OPTIONS = {
  json: { type: 'boolean' },
  server: { type: 'string' },
  keys: { type: 'string' },
  concurrency: { type: 'string' },
  rate: { type: 'string' },
  burst: { type: 'string' },
} as const;
type Options = { json?: boolean; server?: string; keys?: string; concurrency?: string; rate?: string; burst?: string };

const OWN: Record<Sub, readonly (keyof Options)[]> = { list: [], show: ['keys'], set: ['concurrency', 'rate', 'burst'], delete: [] };

/** `--rate N/PERIOD`: N an integer, PERIOD a duration (`1s`, `1m30s`, `500ms`) or a bare unit (`s`: one of it). */
const RATE = /^([1-9]\d*)\/(\S+)$/;

const limitUrl = (name: string) => `/api/limits/${encodeURIComponent(name)}`;

/** `svc limits [list]|show|set|delete`: flow control's named limits over the REST API; returns the exit code. */
export async function limitsCommand(argv: string[], out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  let json = false;
  return runCli('limits', usageSynopsis(LIMITS_USAGE), err, async () => {
    const { values, positionals } = parseCliArgs(argv, OPTIONS);
    json = values.json === true;
    const [first, ...args] = positionals;
    const sub = first ?? 'list';
    if (!SUBCOMMANDS.some((s) => s === sub)) throw new UsageError(`unknown subcommand '${sub}' (list, show, set or delete)`);
    const name = sub as Sub;
    for (const key of ['keys', 'concurrency', 'rate', 'burst'] as const) {
      if (values[key] !== undefined && !OWN[name].includes(key)) throw new UsageError(`--${key} does not apply to ${name}`);
    }
    if (name === 'list' && args.length) throw new UsageError(`list takes no arguments (got ${args.join(' ')})`);
    const [limit, ...extra] = args;
    if (name !== 'list') {
      if (!limit) throw new UsageError(`${name} needs the limit's NAME`);
      if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
      // A playbook's inline limit (@<path>) is read, never set or deleted: its playbook holds it.
      if (name !== 'show' && limit.startsWith('@')) {
        throw new UsageError(`${limit} is the inline limit of playbook ${limit.slice(1)} (its concurrency: {limit: N}): its playbook holds it; change the playbook, or set a named limit and name it there`);
      }
      if (!limit.startsWith('@') && !LIMIT_NAME.test(limit)) throw new UsageError(`NAME ${LIMIT_NAME_RULE}, got ${JSON.stringify(limit)}`);
    }
    const body = name === 'set' ? putBody(values) : undefined;
    const keys = name === 'show' ? keysOption(values.keys) : undefined;
    const client = cliClient(values.server);
    try {
      if (name === 'list') return await list(client, values.json === true, out);
      if (name === 'show') return await show(client, limit, keys, values.json === true, out);
      if (name === 'set') return await set(client, limit, body!, values.json === true, out);
      return await remove(client, limit, values.json === true, out);
    } catch (e) {
      if (e instanceof ServerError) {
        if (values.json) out.write(refusalJson(e));
        err.write(`svc limits: ${describeServerError(e)}\n`);
        return refusalExitCode(e.status);
      }
      if (e instanceof UnexpectedAnswerError) {
        if (values.json) out.write(noAnswerJson(e.message));
        err.write(`svc limits: ${e.message}\n`);
        return EXIT.failed;
      }
      throw e;
    } finally {
      client.close();
    }
  }, { out, argv, json: () => json });
}

/** A positive integer option, or a usage error naming it. */
function positive(flag: string, text: string): number {
  if (!/^[1-9]\d*$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`${flag} expects a positive integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

// The most keys GET /api/limits/{name} lists (its `keys`): more is a usage error here, not a 422 there.
const KEYS_MAX = 1000;

function keysOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const keys = positive('--keys', text);
  if (keys > KEYS_MAX) throw new UsageError(`--keys expects an integer from 1 to ${KEYS_MAX}, got ${JSON.stringify(text)}`);
  return keys;
}

/**
 * `--rate 10/1s` as the API's rate: `{limit: 10, period_seconds: 1}`. The period is taken as
 * written and refused as the API would refuse it (src/flow/rate-period.ts), never rounded to
 * another (5/0.5ms is not 5/1ms).
 */
export function parseRate(text: string): { limit: number; period_seconds: number } {
  const m = RATE.exec(text.trim());
  const unit = m && /^(ms|s|m|h|d)$/.test(m[2]) ? `1${m[2]}` : m?.[2];
  const exact = unit === undefined ? undefined : exactDurationMs(unit);
  if (!m || exact === undefined || exact <= 0) throw new UsageError(`--rate expects N/PERIOD with PERIOD a duration (10/1s, 100/1m, 5/500ms, 1000/h), got ${JSON.stringify(text)}`);
  const ms = wholeMs(exact);
  const period = `--rate's PERIOD ${m[2]}`;
  if (ms === undefined) throw new UsageError(`${period} ${WHOLE_MS_RULE}, from 1ms to 1d; got ${exact} ms`);
  if (ms < MIN_PERIOD_SECONDS * 1000) throw new UsageError(`${period} must be at least 1ms`);
  if (ms > MAX_PERIOD_SECONDS * 1000) throw new UsageError(`${period} must be at most 1d`);
  return { limit: Number(m[1]), period_seconds: ms / 1000 };
}

/** PUT's body from `set`'s options: at least one of --concurrency and --rate; --burst only with --rate. */
function putBody(values: Options): Record<string, unknown> {
  if (values.concurrency === undefined && values.rate === undefined) throw new UsageError('set needs --concurrency N, --rate N/PERIOD or both');
  if (values.burst !== undefined && values.rate === undefined) throw new UsageError('--burst applies only with --rate');
  const rate = values.rate === undefined ? undefined : { ...parseRate(values.rate), ...(values.burst === undefined ? {} : { burst: positive('--burst', values.burst) }) };
  return { ...(values.concurrency === undefined ? {} : { concurrency: positive('--concurrency', values.concurrency) }), ...(rate ? { rate } : {}) };
}

async function list(client: ServerClient, json: boolean, out: Out): Promise<number> {
  const answer = checked(LimitList, await client.request<unknown>('GET', '/api/limits'), 'GET /api/limits');
  if (json) out.write(`${JSON.stringify(answer, null, 2)}\n`);
  else out.write(answer.limits.length ? limitsTable(answer.limits) : 'no limits\n');
  return EXIT.ok;
}

async function show(client: ServerClient, name: string, keys: number | undefined, json: boolean, out: Out): Promise<number> {
  const answer = checked(LimitDetail, await client.request<unknown>('GET', `${limitUrl(name)}${keys === undefined ? '' : `?keys=${keys}`}`), 'GET /api/limits/{name}');
  out.write(json ? `${JSON.stringify(answer, null, 2)}\n` : limitText(answer));
  return EXIT.ok;
}

/**
 * PUT replaces the limit whole: what it allowed before is read first (a viewer's read), so the
 * answer says what a part not given again was.
 */
async function set(client: ServerClient, name: string, body: Record<string, unknown>, json: boolean, out: Out): Promise<number> {
  const before = json ? undefined : await previous(client, name);
  const answer = checked(LimitPut, await client.request<unknown>('PUT', limitUrl(name), body), 'PUT /api/limits/{name}');
  if (json) {
    out.write(`${JSON.stringify(answer, null, 2)}\n`);
    return EXIT.ok;
  }
  const now = limitPartsText(answer);
  const was = before?.defined ? limitPartsText(before) : undefined;
  const verb = answer.created ? 'created' : was === now ? 'unchanged' : 'replaced';
  out.write(`limit ${name} ${verb}: ${now}${was !== undefined && was !== now ? ` (was: ${was})` : ''}\n`);
  return EXIT.ok;
}

/** The limit as it is now; undefined when there is none (404) or it cannot be read (the PUT then decides, and the answer says only what it is now). */
async function previous(client: ServerClient, name: string) {
  try {
    return checked(LimitDetail, await client.request<unknown>('GET', `${limitUrl(name)}?keys=1`), 'GET /api/limits/{name}');
  } catch (e) {
    if (e instanceof ServerError || e instanceof UnexpectedAnswerError) return undefined;
    throw e;
  }
}

async function remove(client: ServerClient, name: string, json: boolean, out: Out): Promise<number> {
  const answer = await client.request<unknown>('DELETE', limitUrl(name));
  out.write(json ? `${JSON.stringify(answer, null, 2)}\n` : `limit ${name} deleted\n`);
  return EXIT.ok;
}
