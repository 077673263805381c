// The `svc agent` and `svc mcp` help texts, apart from the commands so `svc --help` loads nothing else.

export const AGENT_SUMMARY = 'list the agents a terminal offers; run one against its MCP server';

export const AGENT_USAGE = `svc agent [list] [--workspace W] [--json] [--server URL]
       svc agent run PATH [--method tools/list|tools/call] [--tool T] [--arg k=v ...] [--mcp-server NAME]
                          [--endpoint URL] [--wait] [--json] [--server URL]

  list          registered agents with metadata.terminal.visible (GET /api/agents)
  --workspace W only the agents of workspace W
  run PATH      POST /api/execute {path, resource_kind: agent, workload}; the workload carries
                method (tools/call when --tool is given, else tools/list), tool, arguments (from
                each --arg k=v; a value that reads as JSON is taken as JSON), server, endpoint
  --method M    tools/list or tools/call (the workload's method)
  --tool T      the tool to call (the workload's tool; implies --method tools/call)
  --arg k=v     one of the tool's arguments (repeatable)
  --mcp-server NAME  the MCP server to use (the workload's server), over the agent's own
  --endpoint URL     the MCP server's URL (the workload's endpoint), over the agent's own
  --wait        wait for the execution, printing its status as it changes (paused, queued),
                then its result (the MCP result)
  --json        print answers as JSON
  --server URL  the svc server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)

SVC_API_TOKEN, when set, is sent as the caller's API token.
exit codes: 0 done, 1 refused, an unexpected answer or the execution failed, 2 usage error, 3 server unreachable or not serving now (502-504),
            4 not found (404: no such agent), 6 not allowed (401/403: no token, or a role too low)`;

export const MCP_SUMMARY = 'list MCP servers; deploy, undeploy or check one through its lifecycle playbooks';

export const MCP_USAGE = `svc mcp [list] [--json] [--server URL]
       svc mcp deploy|undeploy|restart|status|<action> NAME [--wait] [--json] [--server URL]

  list          registered MCP servers with their last known status (GET /api/mcp/servers)
  <action> NAME POST /api/mcp/mcp/NAME/lifecycle/<action>: starts the action's playbook
  --wait        follow the action until it ends, printing the server's status as it changes
  --json        print answers as JSON
  --server URL  the svc server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)

SVC_API_TOKEN, when set, is sent as the caller's API token.
exit codes: 0 done, 1 refused, an unexpected answer or the action failed, 2 usage error, 3 server unreachable or not serving now (502-504),
            4 not found (404: no such MCP server), 5 conflict (409), 6 not allowed (401/403: no token, or a role too low)`;
