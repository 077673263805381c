import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { MCP_USAGE } from './agents-usage.ts';
import { cliClient, parseCliArgs, runCli, table, UsageError, type Out } from './api-command.ts';
import { usageSynopsis } from './usage-error.ts';
import { waitForExecution } from './wait-execution.ts';
import { sendKeyed } from './run-api.ts';

const Server = v.looseObject({ name: v.string(), endpoint: v.string(), transport: v.string(), status: v.string(), lifecycle: v.array(v.string()), updated_at: v.string() });
const ServerList = v.looseObject({ items: v.array(Server) });
const Dispatched = v.looseObject({ execution_id: v.number(), server: v.string(), action: v.string(), status: v.string() });
const ACTION = /^[a-z][a-z0-9_\-]*$/;

/** `svc mcp [list]|<action> NAME [--wait]`: MCP servers and their lifecycle; returns the exit code. */
export async function mcpCommand(argv: string[], out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  let json = false;
  return runCli('mcp', usageSynopsis(MCP_USAGE), err, async () => {
    const parsed = parseCliArgs(argv, { wait: { type: 'boolean' }, json: { type: 'boolean' }, server: { type: 'string' } });
    const { values, positionals } = parsed;
    json = values.json === true;
    // Without a subcommand it lists, as `svc limits` does.
    const [sub = 'list', name, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
    if (sub !== 'list' && !ACTION.test(sub)) throw new UsageError(`unknown subcommand '${sub}'`);
    if (sub !== 'list' && !name) throw new UsageError(`${sub} needs the server NAME`);
    if (sub === 'list' && name) throw new UsageError(`unexpected arguments: ${name}`);
    if (sub === 'list' && values.wait) throw new UsageError('--wait does not apply to list');
    const client = cliClient(values.server);
    try {
      if (sub === 'list') {
        const answer = v.parse(ServerList, await client.request<unknown>('GET', '/api/mcp/servers'));
        if (values.json) out.write(`${JSON.stringify(answer, null, 2)}\n`);
        else if (answer.items.length === 0) out.write('no MCP servers\n');
        else out.write(table([['NAME', 'STATUS', 'TRANSPORT', 'ENDPOINT', 'LIFECYCLE', 'UPDATED'], ...answer.items.map((s) => [s.name, s.status, s.transport, s.endpoint, s.lifecycle.join(',') || '-', s.updated_at])]));
        return 0;
      }
      const serverPath = `/api/mcp/servers/${encodeURIComponent(name)}`;
      // One key per invocation, as svc run's: a dispatch whose answer was lost, sent again, runs the action once.
      const headers = { 'idempotency-key': randomUUID() };
      const dispatch = async () => v.parse(Dispatched, await client.request<unknown>('POST', `/api/mcp/mcp/${encodeURIComponent(name)}/lifecycle/${encodeURIComponent(sub)}`, {}, undefined, { headers }));
      const dispatched = await sendKeyed(dispatch);
      if (!values.wait) {
        out.write(values.json ? `${JSON.stringify(dispatched, null, 2)}\n` : `${sub} of ${name} started: execution ${dispatched.execution_id}\n`);
        return 0;
      }
      if (!values.json) out.write(`${sub} of ${name} started: execution ${dispatched.execution_id}\n`);
      let last = '';
      const done = await waitForExecution(client, dispatched.execution_id, async () => {
        if (values.json) return;
        const server = v.parse(Server, await client.request<unknown>('GET', serverPath));
        if (server.status !== last) out.write(`  ${name}: ${server.status}\n`);
        last = server.status;
      }, err);
      const server = v.parse(Server, await client.request<unknown>('GET', serverPath));
      if (values.json) out.write(`${JSON.stringify({ ...dispatched, execution_status: done.status, server_status: server.status, result: done.result ?? null, error: done.error ?? null }, null, 2)}\n`);
      else {
        if (server.status !== last) out.write(`  ${name}: ${server.status}\n`);
        out.write(`${sub} ${done.status}${done.status === 'completed' ? '' : `: ${JSON.stringify(done.error)}`}\n`);
      }
      return done.status === 'completed' ? 0 : 1;
    } finally {
      client.close();
    }
  }, { out, argv, json: () => json });
}
