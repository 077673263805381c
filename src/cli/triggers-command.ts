import * as v from 'valibot';
import { parsePlaybook } from '../dsl/parse-playbook.ts';
import { parseInputText } from '../dsl/parse-input-text.ts';
import { ServerClient, ServerError } from '../worker/server-client.ts';
import { cliClient, refusalJson, runCli, serverErrorExit, UsageError, parseCliArgs, type Out } from './api-command.ts';
import { jsonObjectOption } from './json-option.ts';
import { usageSynopsis } from './usage-error.ts';
import { describeServerError } from './describe-server-error.ts';
import { TriggerItem, TriggerList, triggersTable, whenText } from './triggers-table.ts';
import { TRIGGERS_USAGE } from './triggers-usage.ts';

const KINDS = ['schedule', 'webhook', 'nats'] as const;
const SET_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const Fired = v.looseObject({ execution_id: v.nullable(v.number()), duplicate: v.boolean(), fire_key: v.string(), outcome: v.string(), debounced: v.optional(v.boolean()) });
const Backfilled = v.looseObject({ execution_ids: v.array(v.number()), skipped: v.number(), refused: v.optional(v.array(v.looseObject({ fire_key: v.string(), error: v.string() })), []) });
const CatalogEntry = v.looseObject({ content: v.string() });

type Options = { json?: boolean; kind?: string; payload?: string; set?: string[]; 'fire-key'?: string; from?: string; to?: string; server?: string };

const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');
const triggerUrl = (path: string, name: string, action: string) => `/api/triggers/${encodePath(path)}/${encodeURIComponent(name)}/${action}`;

/** `svc triggers [list]|pause|resume|fire|backfill`: the live triggers and what an operator does with them; returns the exit code. */
export async function triggersCommand(argv: string[], out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  let json = false;
  return runCli('triggers', usageSynopsis(TRIGGERS_USAGE), err, async () => {
    const parsed = parseCliArgs(argv, {
        kind: { type: 'string' },
        payload: { type: 'string' },
        set: { type: 'string', multiple: true },
        'fire-key': { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        json: { type: 'boolean' },
        server: { type: 'string' },
      });
    const { values, positionals } = parsed;
    json = values.json === true;
    // Without a subcommand it lists, as `svc limits` does.
    const [sub = 'list', ...args] = positionals;
    if (sub !== 'list' && sub !== 'pause' && sub !== 'resume' && sub !== 'fire' && sub !== 'backfill') throw new UsageError(`unknown subcommand '${sub}'`);
    misplaced(sub, values);
    const client = cliClient(values.server);
    try {
      if (sub === 'list') return await list(client, values, args, out);
      const [path, name, ...extra] = args;
      if (!path || !name) throw new UsageError(`${sub} needs the playbook PATH and the trigger NAME`);
      if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
      if (sub === 'fire') return await fire(client, path, name, values, out);
      if (sub === 'backfill') return await backfill(client, path, name, values, out, err);
      const trigger = v.parse(TriggerItem, await client.request<unknown>('POST', triggerUrl(path, name, sub), {}));
      out.write(values.json ? `${JSON.stringify(trigger, null, 2)}\n` : `${trigger.path} ${trigger.name}: ${trigger.state}${trigger.next_fires[0] ? `, next fire ${whenText(trigger.next_fires[0], Date.now())}` : ''}\n`);
      return 0;
    } catch (e) {
      if (!(e instanceof ServerError)) throw e;
      if (values.json) out.write(refusalJson(e));
      err.write(`svc triggers: ${describeServerError(e)}\n`);
      return serverErrorExit(e);
    } finally {
      client.close();
    }
  }, { out, argv, json: () => json });
}

/** Options that mean nothing to `sub` are usage errors, not silently ignored. */
function misplaced(sub: string, values: Options): void {
  const allowed: Record<string, (keyof Options)[]> = { list: ['kind'], pause: [], resume: [], fire: ['payload', 'set', 'fire-key'], backfill: ['from', 'to'] };
  const own = new Set<keyof Options>(['json', 'server', ...allowed[sub]]);
  for (const key of ['kind', 'payload', 'set', 'fire-key', 'from', 'to'] as const) {
    if (values[key] !== undefined && !own.has(key)) throw new UsageError(`--${key} does not apply to ${sub}`);
  }
}

async function list(client: ServerClient, values: Options, args: string[], out: Out): Promise<number> {
  if (args.length) throw new UsageError(`list takes no arguments (got ${args.join(' ')})`);
  const kind = values.kind;
  if (kind !== undefined && !KINDS.some((k) => k === kind)) throw new UsageError(`--kind expects one of ${KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
  const answer = v.parse(TriggerList, await client.request<unknown>('GET', `/api/triggers${kind ? `?kind=${kind}` : ''}`));
  if (values.json) out.write(`${JSON.stringify(answer, null, 2)}\n`);
  else out.write(answer.triggers.length ? triggersTable(answer.triggers) : `no ${kind ? `${kind} ` : ''}triggers\n`);
  return 0;
}

async function fire(client: ServerClient, path: string, name: string, values: Options, out: Out): Promise<number> {
  const payload = { ...(values.payload === undefined ? {} : jsonObjectOption('--payload', values.payload, '{"day": "2026-01-31"}')), ...(await setValues(client, path, values.set ?? [])) };
  const body = { ...(Object.keys(payload).length || values.payload !== undefined ? { payload } : {}), ...(values['fire-key'] === undefined ? {} : { fire_key: values['fire-key'] }) };
  const fired = v.parse(Fired, await client.request<unknown>('POST', triggerUrl(path, name, 'fire'), body));
  if (values.json) out.write(`${JSON.stringify(fired, null, 2)}\n`);
  else if (fired.duplicate) out.write(`fire key ${fired.fire_key} was fired before (${fired.outcome}${fired.execution_id === null ? '' : `: execution ${fired.execution_id}`}); nothing new started\n`);
  else if (fired.debounced) out.write(`joined the open debounce window of execution ${fired.execution_id ?? '-'}: it runs with this fire's payload unless a later start comes (trigger ${name} of ${path}, fire key ${fired.fire_key})\n`);
  else out.write(`execution ${fired.execution_id ?? '-'} ${fired.outcome} (trigger ${name} of ${path}, fire key ${fired.fire_key})\n`);
  return 0;
}

async function backfill(client: ServerClient, path: string, name: string, values: Options, out: Out, err: Out): Promise<number> {
  if (!values.from || !values.to) throw new UsageError('backfill needs --from and --to (ISO 8601 times, e.g. 2026-01-01T00:00:00Z)');
  const answer = v.parse(Backfilled, await client.request<unknown>('POST', triggerUrl(path, name, 'backfill'), { from: values.from, to: values.to }));
  const refused = answer.refused;
  if (values.json) out.write(`${JSON.stringify(answer, null, 2)}\n`);
  else {
    out.write(`started ${answer.execution_ids.length} execution${answer.execution_ids.length === 1 ? '' : 's'}${answer.execution_ids.length ? ` (${answer.execution_ids.join(', ')})` : ''}; ${answer.skipped} fire${answer.skipped === 1 ? '' : 's'} already made or skipped\n`);
    if (refused.length) err.write(`svc triggers: ${refused.length} fire${refused.length === 1 ? '' : 's'} of the range started nothing (recorded as refused):\n${refused.map((r) => `  - ${r.fire_key}: ${r.error}\n`).join('')}`);
  }
  // A fire refused is no success: a script sees it, with --json too (the answer has them).
  return refused.length ? 1 : 0;
}

/**
 * `--set key=value` items as payload values, each read as the type the playbook's newest
 * version declares for it in `inputs:` (as `svc run --set` does; a string when undeclared).
 */
async function setValues(client: ServerClient, path: string, sets: readonly string[]): Promise<Record<string, unknown>> {
  if (sets.length === 0) return {};
  const pairs = sets.map((item) => {
    const eq = item.indexOf('=');
    const key = eq < 0 ? '' : item.slice(0, eq);
    if (!SET_KEY.test(key)) throw new UsageError(`--set expects key=value with key a name (letters, digits, _), got ${JSON.stringify(item)}`);
    return [key, item.slice(eq + 1)] as const;
  });
  const inputs = await declaredInputs(client, path);
  const out: Record<string, unknown> = {};
  for (const [key, text] of pairs) {
    const read = parseInputText(inputs?.[key]?.type, text);
    if (!read.ok) throw new UsageError(`--set ${key}: ${read.message}`);
    out[key] = read.value;
  }
  return out;
}

/** The `inputs:` of the newest version at `path`; undefined when it declares none or cannot be read (the server then decides). */
async function declaredInputs(client: ServerClient, path: string) {
  try {
    const entry = v.safeParse(CatalogEntry, await client.request<unknown>('GET', `/api/catalog/playbook/${encodePath(path)}`));
    const parsed = entry.success ? parsePlaybook(entry.output.content) : undefined;
    return parsed?.ok ? parsed.playbook.inputs : undefined;
  } catch (e) {
    if (e instanceof ServerError && e.status === 404) return undefined;
    throw e;
  }
}
