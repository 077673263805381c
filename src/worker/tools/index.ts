import { guardTool } from './guard-tool.ts';
import { http } from './http.ts';
import { noop } from './noop.ts';
import { postgres } from './postgres.ts';
import { shell } from './shell.ts';
import type { Tool } from './types.ts';

// The MCP SDK costs a worker's start about a quarter of a second of CPU: it loads with the first
// `mcp` task, not in every worker (and every server with in-process pools) that never runs one.
const mcp: Tool = async (task, ctx) => (await import('./mcp.ts')).mcp(task, ctx);

/**
 * The task kinds a worker runs, each guarded. `playbook` is not among them: a child playbook runs
 * on the server (the execution machine emits `startChild`, actors/ create the child execution),
 * so no worker slot waits for it.
 */
export const tools: Record<string, Tool> = {
  http: guardTool(http),
  shell: guardTool(shell),
  postgres: guardTool(postgres),
  mcp: guardTool(mcp),
  noop: guardTool(noop),
};
