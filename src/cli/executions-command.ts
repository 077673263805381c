import * as v from 'valibot';
import { durationMs } from '../dsl/duration.ts';
import { StartTimeText } from '../start-time-text.ts';
import { ServerError, type ServerClient } from '../worker/server-client.ts';
import { EXECUTION_STATUSES } from '../../machines/statuses.ts';
import { cliClient, noAnswerJson, parseCliArgs, refusalJson, runCli, UsageError, type Out } from './api-command.ts';
import { controlExecution } from './execution-control.ts';
import { ExecutionDetail, ExecutionState, statusText } from './execution-status-view.ts';
import { ExecutionList, executionsTable } from './executions-table.ts';
import { EXECUTION_COMMANDS, EXIT, refusalExitCode, type ExecutionCommandName } from './executions-usage.ts';
import { printLogs } from './logs-view.ts';
import { describeServerError } from './describe-server-error.ts';
import { checked, RunApi, UnexpectedAnswerError } from './run-api.ts';
import { LABEL_KEY, LABEL_KEY_RULE } from '../label-key.ts';

// The most GET /api/executions gives in a page (its `limit`, src/api/executions.ts): more is a usage error here, not a 422 there.
const LIST_LIMIT_MAX = 500;

// One parser for the eight commands: an option another of them takes is a usage error here
// (said plainly), not something silently ignored.
const OPTIONS = {
  json: { type: 'boolean' },
  server: { type: 'string' },
  status: { type: 'string' },
  'path-prefix': { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  parent: { type: 'string' },
  trigger: { type: 'string' },
  by: { type: 'string' },
  search: { type: 'string' },
  label: { type: 'string', multiple: true },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  reason: { type: 'string' },
  cascade: { type: 'boolean' },
  'no-cascade': { type: 'boolean' },
  from: { type: 'string' },
  data: { type: 'string' },
  'idempotency-key': { type: 'string' },
} as const;
type OptionName = keyof typeof OPTIONS;

const OWN: Record<ExecutionCommandName, readonly OptionName[]> = {
  list: ['status', 'path-prefix', 'since', 'until', 'parent', 'trigger', 'by', 'search', 'label', 'limit', 'cursor'],
  status: [],
  logs: ['follow'],
  cancel: ['reason', 'cascade', 'no-cascade'],
  pause: ['reason'],
  resume: ['reason'],
  retry: ['from', 'idempotency-key'],
  signal: ['data', 'idempotency-key'],
};

/** A positional execution id: a positive integer, or a usage error. */
function executionId(text: string | undefined, name: string): number {
  if (text === undefined) throw new UsageError(`${name} needs an execution ID`);
  const id = Number(text);
  if (!/^[1-9]\d*$/.test(text) || !Number.isSafeInteger(id)) throw new UsageError(`the execution ID must be a positive integer, got ${JSON.stringify(text)}`);
  return id;
}

/** `--since` (or `--until`): a duration back from `now` (2h, 90m, 1d) as the ISO time it names, or an ISO time passed on as written. */
export function sinceTime(text: string, now: number, option = '--since'): string {
  const ms = durationMs(text);
  if (ms !== undefined) return new Date(now - ms).toISOString();
  if (v.is(StartTimeText, text)) return text;
  throw new UsageError(`${option} expects an ISO 8601 time (2026-11-01T08:00:00Z, 2026-11-01) or a duration (30m, 2h, 1d), got ${JSON.stringify(text)}`);
}

/** `svc status` names at most this many children (a loop of playbook tasks may start thousands). */
const STATUS_CHILDREN = 10;

type ListOptions = { status?: string; 'path-prefix'?: string; since?: string; until?: string; parent?: string; trigger?: string; by?: string; search?: string; label?: string[]; limit?: string; cursor?: string; json?: boolean };

/**
 * `svc list|status|logs|cancel|pause|resume|retry|signal`: daily work on executions over the
 * REST API; returns the exit code (EXECUTION_EXIT_CODES).
 */
export async function executionsCommand(name: ExecutionCommandName, argv: string[], out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  let json = false;
  return runCli(name, EXECUTION_COMMANDS[name].usage.split('\n')[0], err, async () => {
    const { values, positionals } = parseCliArgs(argv, OPTIONS);
    json = values.json === true;
    for (const [key, value] of Object.entries(values)) {
      if (value !== undefined && key !== 'json' && key !== 'server' && !OWN[name].some((own) => own === key)) throw new UsageError(`--${key} does not apply to ${name}`);
    }
    const [first, ...rest] = positionals;
    const id = name === 'list' ? 0 : executionId(first, name);
    const extra = name === 'list' ? positionals : name === 'signal' ? [] : rest;
    if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
    const client = cliClient(values.server);
    try {
      if (name === 'list') return await list(client, values, out);
      if (name === 'status') return await status(client, id, values.json === true, out);
      if (name === 'logs') return await logs(client, id, values.follow === true, values.json === true, out, err);
      return await controlExecution(name, client, id, rest, values, out);
    } catch (e) {
      if (e instanceof ServerError) {
        if (values.json) out.write(refusalJson(e));
        err.write(`svc ${name}: ${describeServerError(e)}\n`);
        return refusalExitCode(e.status);
      }
      if (e instanceof UnexpectedAnswerError) {
        if (values.json) out.write(noAnswerJson(e.message));
        err.write(`svc ${name}: ${e.message}\n`);
        return EXIT.failed;
      }
      throw e;
    } finally {
      client.close();
    }
  }, { out, argv, json: () => json });
}

async function list(client: ServerClient, values: ListOptions, out: Out): Promise<number> {
  const query = new URLSearchParams();
  const wanted = values.status;
  if (wanted !== undefined) {
    if (!EXECUTION_STATUSES.some((s) => s === wanted)) throw new UsageError(`--status expects one of ${EXECUTION_STATUSES.join(', ')}, got ${JSON.stringify(wanted)}`);
    query.set('status', wanted);
  }
  if (values['path-prefix'] !== undefined) query.set('path_prefix', values['path-prefix']);
  const now = Date.now();
  const after = values.since === undefined ? undefined : sinceTime(values.since, now);
  const before = values.until === undefined ? undefined : sinceTime(values.until, now, '--until');
  // A range that ends where it starts, or before, lists nothing: a mistake (2h and 1h swapped), said as one.
  if (after !== undefined && before !== undefined && Date.parse(before) <= Date.parse(after)) {
    throw new UsageError(`--until ${values.until} (${new Date(Date.parse(before)).toISOString()}) is not after --since ${values.since} (${new Date(Date.parse(after)).toISOString()}): no execution could match`);
  }
  if (after !== undefined) query.set('started_after', after);
  if (before !== undefined) query.set('started_before', before);
  if (values.parent !== undefined) {
    if (!/^[1-9]\d*$/.test(values.parent) || !Number.isSafeInteger(Number(values.parent))) throw new UsageError(`--parent expects an execution ID (a positive integer), got ${JSON.stringify(values.parent)}`);
    query.set('parent', values.parent);
  }
  if (values.trigger !== undefined) query.set('trigger', values.trigger);
  if (values.by !== undefined) query.set('requested_by', values.by);
  if (values.search !== undefined) query.set('q', values.search);
  // Two values of one key match nothing (an execution has one value per label): the server
  // refuses them (422), and here, before sending, as the bad option value it is.
  const labels = new Map<string, string>();
  for (const label of values.label ?? []) {
    const eq = label.indexOf('=');
    const [key, value] = [label.slice(0, Math.max(eq, 0)), label.slice(eq + 1)];
    if (eq < 1 || !LABEL_KEY.test(key)) throw new UsageError(`--label expects key=value with key of ${LABEL_KEY_RULE}, got ${JSON.stringify(label)}`);
    if ((labels.get(key) ?? value) !== value) throw new UsageError(`--label names ${key} twice, with two values (an execution has one value per label)`);
    labels.set(key, value);
    query.append('label', `${key}:${value}`);
  }
  if (values.limit !== undefined) {
    if (!/^[1-9]\d*$/.test(values.limit)) throw new UsageError(`--limit expects a positive integer, got ${JSON.stringify(values.limit)}`);
    if (Number(values.limit) > LIST_LIMIT_MAX) throw new UsageError(`--limit expects an integer from 1 to ${LIST_LIMIT_MAX}, got ${JSON.stringify(values.limit)}`);
    query.set('limit', values.limit);
  }
  if (values.cursor !== undefined) query.set('cursor', values.cursor);
  const url = `/api/executions${query.size ? `?${query}` : ''}`;
  const answer = checked(ExecutionList, await client.request<unknown>('GET', url), 'GET /api/executions');
  if (values.json) out.write(`${JSON.stringify(answer, null, 2)}\n`);
  else if (answer.executions.length === 0) out.write(values.cursor === undefined ? 'no executions\n' : 'no more executions\n');
  else out.write(`${executionsTable(answer.executions)}${answer.next_cursor === null ? '' : `more: --cursor ${answer.next_cursor}\n`}`);
  return EXIT.ok;
}

async function status(client: ServerClient, id: number, json: boolean, out: Out): Promise<number> {
  const detail = checked(ExecutionDetail, await client.request<unknown>('GET', `/api/executions/${id}`), 'GET /api/executions/{id}');
  if (json) {
    out.write(`${JSON.stringify(detail, null, 2)}\n`);
    return EXIT.ok;
  }
  const state = checked(ExecutionState, await client.request<unknown>('GET', `/api/executions/${id}/state`), 'GET /api/executions/{id}/state');
  const children = checked(ExecutionList, await client.request<unknown>('GET', `/api/executions?parent=${id}&limit=${STATUS_CHILDREN}`), 'GET /api/executions');
  const total = Object.values(children.counts).reduce((a, b) => a + b, 0);
  out.write(statusText(detail, state.steps, Date.now(), { items: children.executions, total }, state.kept_signals, state.step_order));
  return EXIT.ok;
}

async function logs(client: ServerClient, id: number, follow: boolean, json: boolean, out: Out, err: Out): Promise<number> {
  // Ctrl-C while following ends the following (130), never the execution.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  if (follow) process.once('SIGINT', onSignal);
  try {
    return await printLogs(new RunApi(client), id, { follow, json, out, err, signal: stop.signal });
  } finally {
    process.off('SIGINT', onSignal);
  }
}
