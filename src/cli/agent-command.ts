import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { AGENT_USAGE } from './agents-usage.ts';
import { cliClient, runCli, table, UsageError, parseCliArgs, type Out } from './api-command.ts';
import { usageSynopsis } from './usage-error.ts';
import { parseJsonExact } from '../exact-json.ts';
import { waitForExecution } from './wait-execution.ts';
import { sendKeyed } from './run-api.ts';
import { isTerminalExecutionStatus } from '../../machines/statuses.ts';

const AgentList = v.looseObject({
  items: v.array(v.looseObject({ path: v.string(), catalog_id: v.nullable(v.number()), name: v.nullable(v.string()), workspace: v.nullable(v.string()), scopes: v.array(v.string()), capabilities: v.array(v.string()), description: v.nullable(v.string()) })),
});
const Started = v.looseObject({ execution_id: v.number() });
const LIST_OPTIONS = new Set(['workspace', 'json', 'server']);
const RUN_OPTIONS = new Set(['method', 'tool', 'arg', 'mcp-server', 'endpoint', 'wait', 'json', 'server']);

// `--arg k=v`: a value that parses as JSON (numbers, booleans, objects) is taken as JSON, else as
// text. Each number exactly: one a double would change (1e400, an id past 2^53) is its text, as
// JSON.parse alone would send 1e400 as null.
function parseArg(raw: string): [string, unknown] {
  const eq = raw.indexOf('=');
  if (eq < 1) throw new UsageError(`--arg expects key=value, got ${JSON.stringify(raw)}`);
  const value = raw.slice(eq + 1);
  try {
    return [raw.slice(0, eq), parseJsonExact(value)];
  } catch {
    return [raw.slice(0, eq), value];
  }
}

/** `svc agent [list]|run`: the terminal's agents, and running one; returns the exit code. */
export async function agentCommand(argv: string[], out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  let json = false;
  return runCli('agent', usageSynopsis(AGENT_USAGE), err, async () => {
    const parsed = parseCliArgs(argv, {
        workspace: { type: 'string' },
        method: { type: 'string' },
        tool: { type: 'string' },
        arg: { type: 'string', multiple: true },
        'mcp-server': { type: 'string' },
        endpoint: { type: 'string' },
        wait: { type: 'boolean' },
        json: { type: 'boolean' },
        server: { type: 'string' },
      });
    const { values, positionals } = parsed;
    json = values.json === true;
    // Without a subcommand it lists, as `svc limits` does.
    const [sub = 'list', path, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
    // An option of the other subcommand would be ignored: a typo or a misunderstanding, said at once.
    if (sub === 'list' || sub === 'run') {
      const own = sub === 'list' ? LIST_OPTIONS : RUN_OPTIONS;
      for (const [key, value] of Object.entries(values)) if (value !== undefined && !own.has(key)) throw new UsageError(`--${key} does not apply to ${sub}`);
    }
    if (sub === 'list') {
      if (path) throw new UsageError(`unexpected arguments: ${path}`);
      const client = cliClient(values.server);
      try {
        const query = values.workspace === undefined ? '' : `?workspace=${encodeURIComponent(values.workspace)}`;
        const answer = v.parse(AgentList, await client.request<unknown>('GET', `/api/agents${query}`));
        if (values.json) out.write(`${JSON.stringify(answer, null, 2)}\n`);
        else if (answer.items.length === 0) out.write('no agents\n');
        else out.write(table([['PATH', 'NAME', 'WORKSPACE', 'CAPABILITIES', 'SCOPES'], ...answer.items.map((a) => [a.path, a.name ?? '-', a.workspace ?? '-', a.capabilities.join(',') || '-', a.scopes.join(',') || '-'])]));
        return 0;
      } finally {
        client.close();
      }
    }
    if (sub !== 'run') throw new UsageError(`unknown subcommand '${sub}'`);
    if (!path) throw new UsageError('run needs the agent PATH');
    const method = values.method ?? (values.tool ? 'tools/call' : 'tools/list');
    if (method !== 'tools/list' && method !== 'tools/call') throw new UsageError(`--method expects tools/list or tools/call, got ${JSON.stringify(method)}`);
    if (method === 'tools/call' && !values.tool) throw new UsageError('--method tools/call needs --tool');
    const workload: Record<string, unknown> = { method, arguments: Object.fromEntries((values.arg ?? []).map(parseArg)) };
    if (values.tool) workload.tool = values.tool;
    if (values['mcp-server']) workload.server = values['mcp-server'];
    if (values.endpoint) workload.endpoint = values.endpoint;
    const client = cliClient(values.server);
    try {
      // One key per invocation, as svc run's: a start whose answer was lost, sent again, runs the agent's call once.
      const headers = { 'idempotency-key': randomUUID() };
      const send = async () => v.parse(Started, await client.request<unknown>('POST', '/api/execute', { path, resource_kind: 'agent', workload }, undefined, { headers }));
      const started = await sendKeyed(send);
      if (!values.wait) {
        out.write(values.json ? `${JSON.stringify(started, null, 2)}\n` : `execution ${started.execution_id} started (agent ${path})\n`);
        return 0;
      }
      if (!values.json) out.write(`execution ${started.execution_id} started (agent ${path}); waiting\n`);
      // Each status it passes through while not done (queued, paused, running again), as svc mcp
      // --wait prints the server's: a paused or queued agent otherwise waited without a word.
      let last = 'running';
      const done = await waitForExecution(client, started.execution_id, (answer) => {
        if (!values.json && answer.status !== last && !isTerminalExecutionStatus(answer.status)) out.write(`  execution ${started.execution_id}: ${answer.status}\n`);
        last = answer.status;
      }, err);
      if (values.json) out.write(`${JSON.stringify(done, null, 2)}\n`);
      else out.write(`execution ${done.execution_id} ${done.status}\n${JSON.stringify(done.status === 'completed' ? done.result : done.error, null, 2)}\n`);
      return done.status === 'completed' ? 0 : 1;
    } finally {
      client.close();
    }
  }, { out, argv, json: () => json });
}
