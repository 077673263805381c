import * as v from 'valibot';
import { ServerClient, ServerError } from './server-client.ts';
import type { TaskOutcome } from './tools/types.ts';

const ServerAnswer = v.looseObject({
  name: v.string(),
  endpoint: v.string(),
  transport: v.optional(v.string()),
  auth: v.optional(v.nullable(v.string())),
});

export type ResolvedMcpServer = { endpoint: string; transport?: string; auth?: string };

/**
 * The endpoint, transport and credential name of the MCP server registered as `name` (a task's
 * `server:`), from the server's `GET /api/mcp/servers/{name}`; an error outcome when unknown.
 */
export async function resolveMcpServer(client: ServerClient, name: string): Promise<ResolvedMcpServer | TaskOutcome> {
  try {
    const answer = v.safeParse(ServerAnswer, await client.request<unknown>('GET', `/api/mcp/servers/${encodeURIComponent(name)}`));
    if (!answer.success) return { status: 'error', data: null, error: { message: `MCP server '${name}': the server's answer has no endpoint`, code: 'mcp_server_unavailable' } };
    const { endpoint, transport, auth } = answer.output;
    return { endpoint, ...(transport ? { transport } : {}), ...(auth ? { auth } : {}) };
  } catch (err) {
    const missing = err instanceof ServerError && err.status === 404;
    return {
      status: 'error',
      data: null,
      error: missing ? { message: `server: MCP server '${name}' is not registered`, code: 'mcp_server_not_found' } : { message: `server: MCP server '${name}' could not be resolved`, code: 'mcp_server_unavailable' },
    };
  }
}
