import { guardTool } from './guard-tool.ts';
import { http } from './http.ts';
import { mcp } from './mcp.ts';
import { noop } from './noop.ts';
import { postgres } from './postgres.ts';
import { shell } from './shell.ts';
import type { Tool } from './types.ts';

/** The task kinds a worker runs itself (`playbook` is handled by the worker elsewhere), each guarded. */
export const tools: Record<string, Tool> = {
  http: guardTool(http),
  shell: guardTool(shell),
  postgres: guardTool(postgres),
  mcp: guardTool(mcp),
  noop: guardTool(noop),
};
